"""verify tells the truth: a run whose substantive checks were skipped does not pass.

The missing tools are real: `archform verify` runs in a new virtual environment that holds
only archform's base dependencies (what `pipx install archform` gives: no Pulumi SDK, no
kubernetes-validate, no Ansible) with a PATH that has no checkov. Nothing is mocked.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest

from archform.verify import ADVISORY, SUBSTANTIVE, Result, blocking_skips, builtin_checks
from distribution.venvs import run, venv
from support import BLUEPRINTS, ROOT, run_cli

FLEET = "inference-h100-single-region"  # no Slurm: every check it gets can be made to skip


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a base-dependencies-only interpreter, a generated fleet tree)."""
    base = tmp_path_factory.mktemp("bare")
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["dependencies"]
    python = venv(base / "venv", *deps)
    out = base / "out"
    gen = run_cli(["generate", str(BLUEPRINTS / f"{FLEET}.yaml"), "-o", str(out)])
    assert gen.returncode == 0, gen.stderr
    return python, out


def _verify(
    python: Path, tree: Path, *args: str, ci: str | None = None
) -> tuple[int, list[dict[str, str]], str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "VIRTUAL_ENV")}
    env["PYTHONPATH"] = str(ROOT / "src")
    env["PATH"] = os.pathsep.join([str(python.parent), "/usr/bin", "/bin"])  # no checkov
    if ci is not None:
        env["CI"] = ci
    cmd = [str(python), "-m", "archform", "verify", str(tree), "--format", "json", *args]
    proc = run(cmd, cwd=tree, env=env, timeout=600)
    rows = json.loads(proc.stdout) if proc.stdout.strip() else []
    return proc.returncode, rows, proc.stderr


@pytest.mark.slow
@pytest.mark.system
def test_every_substantive_check_skipped_fails_and_each_skip_names_its_install(
    bare: tuple[Path, Path],
) -> None:
    python, tree = bare
    code, rows, stderr = _verify(python, tree)
    assert rows and {r["status"] for r in rows} == {"skipped"}, rows
    checks = {r["check"] for r in rows}
    assert {"pulumi", "kubernetes-validate", "checkov"} <= checks, checks
    assert code == 1, stderr
    assert "substantive checks were skipped" in stderr and "--allow-skips" in stderr
    # a clone run by an interpreter ./dev does not manage: pip -e with that interpreter
    extra = f"{python} -m pip install -e '{ROOT}["
    for row in rows:
        if row["check"] == "checkov":
            assert f"{ROOT}/dev install checkov" in row["detail"], row
        else:
            assert extra in row["detail"], row


@pytest.mark.slow
@pytest.mark.system
def test_allow_skips_passes_the_same_run_and_ci_is_strict(bare: tuple[Path, Path]) -> None:
    python, tree = bare
    code, rows, stderr = _verify(python, tree, "--allow-skips")
    assert code == 0, stderr
    assert {r["status"] for r in rows} == {"skipped"}
    code, _, stderr = _verify(python, tree, ci="true")
    assert code == 1 and "CI=true: no check may be skipped" in stderr, stderr
    code, _, stderr = _verify(python, tree, "--allow-skips", ci="true")
    assert code == 0, stderr
    code, _, stderr = _verify(python, tree, "--strict", "--allow-skips")
    assert code == 2 and "contradict" in stderr, stderr


def test_an_advisory_skip_fails_only_strict_runs() -> None:
    ran = [Result("pulumi", "pulumi", "passed"), Result("checkov", "kubernetes", "skipped")]
    assert blocking_skips(ran, "substantive") == []
    assert blocking_skips(ran, "strict") == [ran[1]]
    # the case: one check ran, three were skipped -> not a pass
    mostly = [
        Result("ansible", "ansible", "passed"),
        Result("slurm", "ansible", "skipped"),
        Result("pulumi", "pulumi", "skipped"),
        Result("policy", "pulumi/policy", "skipped"),
    ]
    assert blocking_skips(mostly, "substantive") == mostly[1:]
    assert blocking_skips(mostly, "allow") == []


def test_every_check_is_classed_substantive_or_advisory() -> None:
    names = {c.name for c in builtin_checks()} | {"policy"}
    assert names == set(SUBSTANTIVE) | set(ADVISORY)
    assert not set(SUBSTANTIVE) & set(ADVISORY)
