"""Test support: golden trees, required external tools, CLI runner."""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NoReturn

import pytest

# Module marks of a test that starts daemons on localhost or changes system packages: one at a
# time (tests/conftest.py's lock), all on one pytest-xdist worker under `--dist loadgroup`.
DAEMONS = [pytest.mark.system, pytest.mark.daemons, pytest.mark.xdist_group("daemons")]

ROOT = Path(__file__).resolve().parents[2]
BLUEPRINTS = ROOT / "blueprints"
GOLDENS = ROOT / "tests" / "goldens"
REQUIRE_TOOLS = os.environ.get("ARCHFORM_REQUIRE_TOOLS") == "1"


def require_tool(*tools: str) -> None:
    """Skip (locally) or fail (CI: ARCHFORM_REQUIRE_TOOLS=1) when a tool is missing."""
    extra = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "") + os.pathsep + extra
    missing = [t for t in tools if shutil.which(t, path=path) is None]
    if missing:
        reason = f"needs {', '.join(missing)} on PATH (install: see .ci/run)"
        if REQUIRE_TOOLS:
            pytest.fail(f"ARCHFORM_REQUIRE_TOOLS=1 but {reason}")
        pytest.skip(reason)


def missing(reason: str) -> NoReturn:
    """Skip (locally) or fail (CI: ARCHFORM_REQUIRE_TOOLS=1): what the test needs is absent."""
    if REQUIRE_TOOLS:
        pytest.fail(f"ARCHFORM_REQUIRE_TOOLS=1 but {reason}")
    pytest.skip(reason)


def require_module(*modules: str) -> None:
    """Skip (locally) or fail (CI) when a Python package is not installed."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        reason = f"needs Python package(s) {', '.join(missing)} (pip install -e '.[all,dev]')"
        if REQUIRE_TOOLS:
            pytest.fail(f"ARCHFORM_REQUIRE_TOOLS=1 but {reason}")
        pytest.skip(reason)


def verify_skips() -> list[str]:
    """Arguments for an `archform verify` run whose subject is one check, not the whole tree.

    Locally a tool another check needs may be missing (that check is then skipped, and verify
    fails on the skip unless --allow-skips); in CI (ARCHFORM_REQUIRE_TOOLS=1, CI=true) every
    tool is installed, so no argument is added and verify stays strict.
    """
    return [] if REQUIRE_TOOLS else ["--allow-skips"]


def bundled_blueprints() -> list[Path]:
    """Every curated blueprint."""
    return sorted(BLUEPRINTS.glob("*.yaml"))


def run_cli(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input_text: str | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m archform ARGS` in a subprocess (real exit codes, real stderr)."""
    full_env = dict(os.environ)
    full_env.pop("ARCHFORM_DEBUG", None)
    full_env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("NO_COLOR", "1")
    if env:
        full_env.update(env)
    return subprocess.run(
        [sys.executable, "-m", "archform", *args],
        cwd=cwd,
        env=full_env,
        input=input_text,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def compare_tree(actual: dict[str, bytes], golden_dir: Path, update: bool) -> None:
    """Compare a {relpath: bytes} tree with its golden (support/goldens.py: a manifest of
    stored files); with `update`, stage it for the end-of-session rewrite instead."""
    from support import goldens

    key = golden_dir.relative_to(GOLDENS).as_posix()
    if update:
        goldens.stage(key, actual, goldens.current_nodeid())
        return
    try:
        expected = goldens.expected_tree(key)
    except goldens.ManifestError as exc:
        pytest.fail(f"{exc}; run pytest -m golden --update-goldens")
    if expected is None:
        pytest.fail(
            f"no golden tree {goldens.manifest_path(key).relative_to(ROOT)}; "
            "run pytest -m golden --update-goldens"
        )
    problems: list[str] = []
    for rel in sorted(set(expected) - set(actual)):
        problems.append(f"missing file: {rel}")
    for rel in sorted(set(actual) - set(expected)):
        problems.append(f"unexpected file: {rel}")
    for rel in sorted(set(actual) & set(expected)):
        if actual[rel] != expected[rel]:
            diff = difflib.unified_diff(
                expected[rel].decode("utf-8", "replace").splitlines(),
                actual[rel].decode("utf-8", "replace").splitlines(),
                f"golden/{rel}",
                f"generated/{rel}",
                lineterm="",
                n=2,
            )
            problems.append("\n".join(list(diff)[:60]))
    if problems:
        pytest.fail(
            "generated tree differs from golden (pytest -m golden --update-goldens):\n"
            + "\n".join(problems[:20])
        )


def tree_bytes(files: Iterable[object]) -> dict[str, bytes]:
    """{path: content} of GeneratedFile objects."""
    return {f.path: f.content for f in files}  # type: ignore[attr-defined]
