"""A playbook left running by a killed deploy is found (by its working folder, in /proc)
and waited for before another one starts in the same project."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from archform.deploy.phases import PhaseError, leftover_playbooks, wait_for_leftovers


class _Ctx:
    def __init__(self) -> None:
        from archform.deploy.progress import Reporter

        self.console = Console(record=True, width=200)
        self.reporter = Reporter(self.console, None)


def _start(project: Path, tmp_path: Path, seconds: float) -> subprocess.Popen[bytes]:
    # a process whose command line names ansible-playbook, working in the project
    script = tmp_path / "bin" / "ansible-playbook"
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"import time\ntime.sleep({seconds})\n")
    return subprocess.Popen([sys.executable, str(script), "site.yml"], cwd=project)


def test_leftover_playbook_is_found_and_waited_for(tmp_path: Path) -> None:
    project = tmp_path / "out" / "ansible"
    other = tmp_path / "elsewhere"
    project.mkdir(parents=True)
    other.mkdir()
    proc = _start(project, tmp_path, 2)
    unrelated = _start(other, tmp_path, 2)
    try:
        time.sleep(0.2)
        assert leftover_playbooks(project) == [proc.pid]
        began = time.monotonic()
        ctx = _Ctx()
        wait_for_leftovers(ctx, project)  # type: ignore[arg-type]
        assert time.monotonic() - began > 0.5
        assert proc.poll() is not None
        assert f"pid {proc.pid}" in ctx.console.export_text()
        assert leftover_playbooks(project) == []
    finally:
        for p in (proc, unrelated):
            p.kill()
            p.wait()


def test_a_leftover_that_never_ends_is_an_error(tmp_path: Path) -> None:
    project = tmp_path / "ansible"
    project.mkdir()
    proc = _start(project, tmp_path, 30)
    try:
        time.sleep(0.2)
        with pytest.raises(PhaseError, match=f"pid {proc.pid}"):
            wait_for_leftovers(_Ctx(), project, timeout=1.5)  # type: ignore[arg-type]
    finally:
        proc.kill()
        proc.wait()
