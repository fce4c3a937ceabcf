"""validate.yml for real (ansible-playbook on localhost) with a stand-in `srun` that prints
recorded all_reduce_perf output: the bus-bandwidth parsing and per-algorithm floors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Shape of nccl-tests all_reduce_perf output: size count type redop root, then out-of-place
# time algbw busbw #wrong, then the in-place four. Out-of-place busbw is the 8th column.
HEADER = "# size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"


def _table(peak: float) -> str:
    rows = [
        (8, 2, 35.71, 0.0, 0.0),
        (67108864, 16777216, 612.1, 109.64, peak / 2),
        (8589934592, 2147483648, 41234.5, 208.32, peak),
    ]
    lines = [
        f"{size:>12} {count:>13}  float  sum  -1  {t:.2f}  {alg:.2f}  {bus:.2f}  0"
        f"  {t:.2f}  {alg:.2f}  {bus:.2f}  0"
        for size, count, t, alg, bus in rows
    ]
    return HEADER + "\n".join(lines) + "\n# Out of bounds values : 0 OK\n"


SRUN = """#!/bin/sh
case "$*" in
    *printenv*) echo localhost ;;
    *all_reduce_perf*)
        if [ "${NCCL_ALGO:-}" = Ring ]; then cat "$FIXTURES/ring.txt"
        else cat "$FIXTURES/default.txt"; fi ;;
    *) exit 1 ;;
esac
"""

INVENTORY = """\
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: "{{ ansible_playbook_python }}"
  children:
    controller: {hosts: {localhost: {}}}
    compute: {hosts: {localhost: {}}}
"""


def _run(tmp_path: Path, ring: float, default: float) -> subprocess.CompletedProcess[str]:
    support.require_tool("ansible-playbook")
    loaded = load_paths([support.BLUEPRINTS / "onprem-h100-ib-lustre.yaml"])
    write_tree(tmp_path / "tree", build_files(loaded))
    project = tmp_path / "tree" / "ansible"
    (project / "inventory" / "local.yml").write_text(INVENTORY)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(SRUN)
    (bin_dir / "srun").chmod(0o755)
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "ring.txt").write_text(_table(ring))
    (fixtures / "default.txt").write_text(_table(default))
    env = dict(
        os.environ,
        FIXTURES=str(fixtures),
        ANSIBLE_NOCOLOR="1",
        PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
        f"{os.environ.get('PATH', '')}",
    )
    return subprocess.run(
        ["ansible-playbook", "-i", "inventory/local.yml", "validate.yml"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_bus_bandwidth_above_the_floor_passes(tmp_path: Path) -> None:
    proc = _run(tmp_path, ring=364.56, default=470.0)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "busbw_gbytes: 364.56" in proc.stdout and "busbw_gbytes: 470.0" in proc.stdout
    assert "floor_gbytes: 320.0" in proc.stdout  # 8 x NDR400 = 400 GB/s x 0.8
    assert "localhost: PASS" in proc.stdout and "all 1 compute nodes passed" in proc.stdout


def test_bus_bandwidth_below_the_floor_fails_per_algorithm(tmp_path: Path) -> None:
    proc = _run(tmp_path, ring=364.56, default=250.0)
    assert proc.returncode != 0
    assert "'default': {'busbw_gbytes': 250.0, 'floor_gbytes': 320.0, 'passed': False}" in (
        proc.stdout
    )
    assert "'ring': {'busbw_gbytes': 364.56, 'floor_gbytes': 320.0, 'passed': True}" in (
        proc.stdout
    )
