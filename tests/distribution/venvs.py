"""Fresh clones and fresh virtual environments for the packaging tests (real pip, real PyPI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REQUIRE_TOOLS, ROOT

# A build or an install from PyPI on a loaded 2-core machine: minutes, not seconds.
INSTALL_TIMEOUT_S = 1500


def run(
    cmd: list[str],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = INSTALL_TIMEOUT_S,
) -> subprocess.CompletedProcess[str]:
    """Run a command; its output comes back whatever the exit code."""
    return subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """Fail the test with the command's output unless it exited 0."""
    assert proc.returncode == 0, f"{proc.args}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def clean_env(**extra: str) -> dict[str, str]:
    """The environment minus what would let a test use this checkout instead of the install."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.pop("ARCHFORM_VENV", None)
    env["PATH"] = os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin"))
    env.update(extra)
    return env


def clone(dest: Path) -> Path:
    """A fresh clone of this repository at the commit under test (committed work only)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        reason = "needs git and a git checkout of archform"
        if REQUIRE_TOOLS:
            pytest.fail(f"ARCHFORM_REQUIRE_TOOLS=1 but {reason}")
        pytest.skip(reason)
    head = ok(run(["git", "-C", str(ROOT), "rev-parse", "HEAD"])).stdout.strip()
    ok(run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(dest)]))
    ok(run(["git", "-C", str(dest), "checkout", "-q", head]))
    tags = ok(run(["git", "-C", str(dest), "tag", "-l"])).stdout.split()
    if tags:
        ok(run(["git", "-C", str(dest), "tag", "-d", *tags]))
    return dest


def tag(repo: Path, name: str) -> None:
    """Tag the clone's HEAD (an annotated tag, as a release would be)."""
    ok(
        run(
            [
                "git",
                "-C",
                str(repo),
                "-c",
                "user.name=archform-test",
                "-c",
                "user.email=test@archform",
                "tag",
                "-a",
                name,
                "-m",
                name,
            ]
        )
    )


def venv(path: Path, *packages: str) -> Path:
    """A new virtual environment (no system site-packages) with packages from PyPI; its python."""
    ok(run([sys.executable, "-m", "venv", str(path)]))
    python = path / "bin" / "python"
    if packages:
        ok(run([str(python), "-m", "pip", "install", "-q", *packages], env=clean_env()))
    return python
