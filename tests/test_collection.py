"""Every test file in the tree is one the suite collects.

pytest's default norecursedirs skips folders named dist, build and venv: tests/dist (the
packaging tests) sat there unrun for a round. The suite's own collection, in a subprocess with
the same configuration, must reach every tests/**/test_*.py.
"""

from __future__ import annotations

import os
import subprocess
import sys

from support import ROOT


def test_every_test_file_is_collected() -> None:
    tests = ROOT / "tests"
    on_disk = {
        p.relative_to(ROOT).as_posix()
        for p in tests.rglob("test_*.py")
        if "node_modules" not in p.parts
    }
    assert "tests/distribution/test_wheel.py" in on_disk
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         str(tests)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    collected = {line.split("::")[0] for line in proc.stdout.splitlines() if "::" in line}
    assert on_disk - collected == set(), sorted(on_disk - collected)
