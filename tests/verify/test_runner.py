"""The parallel verify runner and its progress display.

Concurrency is shown without timing assertions: two checks wait for each other on a
barrier, which only completes when both run at the same time (jobs=2); with jobs=1 the
first one's wait times out and it reports a failure.
"""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

from archform.cli.verify_progress import Progress
from archform.verify import Check, Result
from archform.verify.runner import CheckRun, Event, default_jobs, run_checks
from support import BLUEPRINTS, run_cli


def _rendezvous(name: str, barrier: threading.Barrier) -> Check:
    def run(root: Path) -> list[Result]:
        try:
            barrier.wait(timeout=5)
        except threading.BrokenBarrierError:
            return [Result(name, root.name, "failed", "ran alone")]
        return [Result(name, root.name, "passed", "ran beside the other check")]

    return Check(name=name, applies=lambda root: True, run=run)


def test_independent_checks_run_at_the_same_time(tmp_path: Path) -> None:
    barrier = threading.Barrier(2)
    checks = [_rendezvous("a", barrier), _rendezvous("b", barrier)]
    runs = run_checks(tmp_path, jobs=2, checks=checks)
    assert [r.status for r in runs] == ["passed", "passed"]


def test_jobs_1_runs_one_check_at_a_time(tmp_path: Path) -> None:
    barrier = threading.Barrier(2)
    checks = [_rendezvous("a", barrier), _rendezvous("b", barrier)]
    runs = run_checks(tmp_path, jobs=1, checks=checks)
    assert runs[0].status == "failed" and runs[0].results[0].detail == "ran alone"


def test_results_keep_check_order_and_timings(tmp_path: Path) -> None:
    slow_started = threading.Event()
    fast_done = threading.Event()

    def slow(root: Path) -> list[Result]:
        slow_started.set()
        fast_done.wait(timeout=5)  # finishes after `fast`
        return [Result("slow", "x", "passed")]

    def fast(root: Path) -> list[Result]:
        slow_started.wait(timeout=5)
        fast_done.set()
        return [Result("fast", "y", "skipped", "no tool")]

    def boom(root: Path) -> list[Result]:
        raise RuntimeError("tool crashed")

    checks = [
        Check("slow", lambda r: True, slow),
        Check("fast", lambda r: True, fast),
        Check("boom", lambda r: True, boom),
        Check("never", lambda r: False, fast),
    ]
    events: list[Event] = []
    runs = run_checks(tmp_path, jobs=3, listener=events.append, checks=checks)
    assert [r.check for r in runs] == ["slow", "fast", "boom"]
    assert [r.status for r in runs] == ["passed", "skipped", "failed"]
    assert "RuntimeError: tool crashed" in runs[2].results[0].detail
    assert all(r.seconds >= 0 for r in runs)
    started = [e.check for e in events if e.run is None]
    finished = [e.check for e in events if e.run is not None]
    assert sorted(started) == sorted(finished) == ["boom", "fast", "slow"]
    assert finished.index("fast") < finished.index("slow")


def test_jobs_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        run_checks(tmp_path, jobs=0, checks=[])
    assert default_jobs() >= 1


def _finish(progress: Progress, name: str, status: str, seconds: float) -> None:
    result = Result(name, ".", status)  # type: ignore[arg-type]
    progress(Event(name, CheckRun(name, [result], seconds)))


def test_plain_progress_lines() -> None:
    out = io.StringIO()
    with Progress(out, ["ansible", "slurm"], live=False) as progress:
        progress(Event("ansible"))
        progress(Event("slurm"))
        _finish(progress, "slurm", "passed", 1.25)
        _finish(progress, "ansible", "failed", 12.0)
    assert out.getvalue().splitlines() == [
        "verify: ansible started",
        "verify: slurm started",
        "verify: slurm ok in 1.2 s (1 result(s))",
        "verify: ansible FAILED in 12.0 s (1 result(s))",
    ]
    assert "\r" not in out.getvalue()


def test_live_progress_redraws_one_line() -> None:
    out = io.StringIO()
    with Progress(out, ["ansible", "slurm", "pulumi"], live=True) as progress:
        progress(Event("ansible"))
        _finish(progress, "ansible", "passed", 3.0)
        progress(Event("slurm"))
        line = progress.line()
    text = out.getvalue()
    assert "\n" not in text and text.count("\r\x1b[K") >= 3
    assert line.startswith("verify 1/3  ansible ok 3.0s  slurm ")
    assert line.endswith("pulumi queued")
    assert text.endswith("\r\x1b[K")  # the live line is erased at the end


def test_cli_reports_each_checks_duration(tmp_path: Path) -> None:
    out = tmp_path / "fleet"
    gen = run_cli(["generate", str(BLUEPRINTS / "inference-3region-a10.yaml"), "-o", str(out)])
    assert gen.returncode == 0, gen.stderr
    run = run_cli(["verify", str(out), "--jobs", "2"], timeout=600)
    lines = run.stdout.splitlines()
    timed = [line.split()[1] for line in lines if line.startswith("TIME ")]
    checked = {
        line.split()[1] for line in lines if line.split()[0] in ("PASSED", "FAILED", "SKIPPED")
    }
    # The pulumi check also reports the policy pack beside each program as `policy` results.
    assert timed and set(timed) == checked - {"policy"}
    assert "policy" in checked
    assert "2 at a time" in lines[-1]
    assert "verify: kubernetes-validate started" in run.stderr  # plain lines: stderr is a pipe
    bad = run_cli(["verify", str(out), "--jobs", "0"])
    assert bad.returncode == 2 and "--jobs 0 must be at least 1" in bad.stderr


def test_cli_draws_a_live_line_on_a_terminal(tmp_path: Path) -> None:
    """stderr on a pseudo-terminal: one redrawn line (\\r + erase), no per-event lines."""
    import os
    import pty
    import subprocess
    import sys

    from support import ROOT

    out = tmp_path / "fleet"
    gen = run_cli(
        ["generate", str(BLUEPRINTS / "inference-h100-single-region.yaml"), "-o", str(out)]
    )
    assert gen.returncode == 0, gen.stderr
    master, slave = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "archform", "verify", str(out), "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    stdout, _ = proc.communicate(timeout=600)
    os.close(master)
    tty = b"".join(chunks).decode("utf-8", "replace")
    assert proc.returncode == 0, stdout.decode()
    assert "\r\x1b[K" in tty and "\n" not in tty  # redrawn in place, never a new line
    # pulumi, kubernetes-validate and checkov apply to a fleet tree
    assert "verify 0/3" in tty and "verify 3/3" in tty
    assert "pulumi ok" in tty and "kubernetes-validate ok" in tty and "checkov ok" in tty
    assert "verify: pulumi started" not in tty  # not the plain-line format
    assert tty.endswith("\r\x1b[K")
    assert b"TIME" in stdout
