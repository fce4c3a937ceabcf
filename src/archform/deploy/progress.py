"""Progress of a deploy: phase lines, per-host task counts, and the log file.

On a terminal the per-host counts are a live Rich table; otherwise (CI, pipes) each task
start and each host's final counts are printed as plain lines. Every line also goes to
``<out>/.archform-deploy/deploy.log`` (opened per write: the generate phase swaps the
output folder under us).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

COUNTS = ("ok", "changed", "failed", "skipped", "unreachable")


@dataclass(slots=True)
class HostCounts:
    """Task results of one host in one playbook run."""

    ok: int = 0
    changed: int = 0
    failed: int = 0
    skipped: int = 0
    unreachable: int = 0
    task: str = ""

    def line(self) -> str:
        """``ok=3 changed=1 failed=0 skipped=2 unreachable=0``."""
        return " ".join(f"{name}={getattr(self, name)}" for name in COUNTS)


class Reporter:
    """Console + log sink for one deploy."""

    def __init__(self, console: Console, log_path: Path | None) -> None:
        self.console = console
        self.log_path = log_path
        self._buffer: list[str] = []

    def attach_log(self, log_path: Path) -> None:
        """Start writing the log (lines printed before are written first)."""
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        pending, self._buffer = self._buffer, []
        for line in pending:
            self._write(line)

    def _write(self, line: str) -> None:
        if self.log_path is None:
            self._buffer.append(line)
            return
        stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        with self.log_path.open("a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {line}\n")

    def log(self, line: str) -> None:
        """Only to the log file."""
        self._write(line)

    def say(self, line: str, style: str = "") -> None:
        """To the console and the log."""
        self.console.print(line, style=style or None, highlight=False, markup=False)
        self._write(line)


@dataclass(slots=True)
class PlaybookProgress:
    """An ansible-runner event handler that counts results per host."""

    reporter: Reporter
    hosts: dict[str, HostCounts] = field(default_factory=dict)
    live: Live | None = None
    task: str = ""

    def _table(self) -> Table:
        table = Table(box=None, pad_edge=False)
        table.add_column("host")
        for name in COUNTS:
            table.add_column(name, justify="right")
        table.add_column("task")
        for host, counts in sorted(self.hosts.items()):
            table.add_row(host, *(str(getattr(counts, n)) for n in COUNTS), counts.task)
        return table

    def __enter__(self) -> PlaybookProgress:
        if self.reporter.console.is_terminal:
            self.live = Live(self._table(), console=self.reporter.console, auto_refresh=False)
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.update(self._table(), refresh=True)
            self.live.__exit__(None, None, None)
        else:
            for host, counts in sorted(self.hosts.items()):
                self.reporter.say(f"    {host}: {counts.line()}")
        for host, counts in sorted(self.hosts.items()):
            self.reporter.log(f"host {host}: {counts.line()}")

    def __call__(self, event: dict[str, Any]) -> bool:
        """Handle one runner event; True keeps it in the runner's artifacts."""
        kind = str(event.get("event", ""))
        data = event.get("event_data") or {}
        if kind == "playbook_on_task_start":
            self.task = str(data.get("task", ""))
            if self.live is None:
                self.reporter.say(f"  TASK {self.task}")
            else:
                self.reporter.log(f"TASK {self.task}")
            return True
        host = data.get("host")
        if not host or not kind.startswith("runner_on_"):
            return True
        counts = self.hosts.setdefault(str(host), HostCounts())
        counts.task = self.task
        result = kind.removeprefix("runner_on_")
        res = data.get("res") or {}
        if result == "ok":
            counts.ok += 1
            if isinstance(res, dict) and res.get("changed"):
                counts.changed += 1
        elif result == "failed":
            if data.get("ignore_errors"):
                counts.ok += 1
            else:
                counts.failed += 1
                msg = res.get("msg", "") if isinstance(res, dict) else ""
                self.reporter.say(f"  FAILED {host}: {self.task}: {msg}", style="red")
        elif result == "skipped":
            counts.skipped += 1
        elif result == "unreachable":
            counts.unreachable += 1
            self.reporter.say(f"  UNREACHABLE {host}", style="red")
        else:
            return True
        self.reporter.log(f"{result} {host} {self.task}")
        if self.live is not None:
            self.live.update(self._table(), refresh=True)
        return True

    def changed(self) -> int:
        """Changed tasks over every host."""
        return sum(c.changed for c in self.hosts.values())
