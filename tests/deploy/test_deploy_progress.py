"""Per-host progress from ansible-runner events (the event shapes runner emits)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from archform.deploy.progress import PlaybookProgress, Reporter


def _events() -> list[dict[str, object]]:
    def ev(kind: str, host: str = "", **data: object) -> dict[str, object]:
        return {"event": kind, "event_data": {"host": host, **data} if host else data}

    return [
        ev("playbook_on_start"),
        ev("playbook_on_task_start", task="Install MUNGE"),
        ev("runner_on_ok", "n1", task="Install MUNGE", res={"changed": True}),
        ev("runner_on_ok", "n2", task="Install MUNGE", res={"changed": False}),
        ev("playbook_on_task_start", task="Start slurmd"),
        ev("runner_on_failed", "n1", task="Start slurmd", res={"msg": "boom"}),
        ev("runner_on_failed", "n2", task="Start slurmd", res={"msg": "x"}, ignore_errors=True),
        ev("playbook_on_task_start", task="GPU only"),
        ev("runner_on_skipped", "n2", task="GPU only"),
        ev("runner_on_unreachable", "n3", task="GPU only", res={"msg": "no route"}),
        ev("playbook_on_stats"),
    ]


def test_counts_per_host_and_plain_lines_off_a_terminal(tmp_path: Path) -> None:
    console = Console(record=True, width=200, force_terminal=False)
    reporter = Reporter(console, None)
    reporter.attach_log(tmp_path / "deploy.log")
    with PlaybookProgress(reporter) as progress:
        for event in _events():
            assert progress(event) is True
    assert progress.changed() == 1
    counts = {h: c.line() for h, c in progress.hosts.items()}
    assert counts == {
        "n1": "ok=1 changed=1 failed=1 skipped=0 unreachable=0",
        "n2": "ok=2 changed=0 failed=0 skipped=1 unreachable=0",
        "n3": "ok=0 changed=0 failed=0 skipped=0 unreachable=1",
    }
    text = console.export_text()
    assert "  TASK Start slurmd" in text
    assert "  FAILED n1: Start slurmd: boom" in text
    assert "  UNREACHABLE n3" in text
    assert "    n2: ok=2 changed=0 failed=0 skipped=1 unreachable=0" in text
    log = (tmp_path / "deploy.log").read_text()
    assert "host n1: ok=1 changed=1 failed=1" in log and "failed n1 Start slurmd" in log


def test_a_terminal_gets_a_live_table(tmp_path: Path) -> None:
    console = Console(record=True, width=200, force_terminal=True)
    reporter = Reporter(console, tmp_path / "deploy.log")
    with PlaybookProgress(reporter) as progress:
        assert progress.live is not None
        for event in _events():
            progress(event)
    text = console.export_text()
    assert "host" in text and "changed" in text and "n3" in text
    assert "TASK Start slurmd" in (tmp_path / "deploy.log").read_text()
