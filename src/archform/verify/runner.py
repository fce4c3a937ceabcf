"""Run the applicable checks of a generated tree, independent checks in parallel.

Each check (ansible-lint, a real slurmctld, Pulumi under mocks, Kubernetes schemas) spends
its time in its own subprocesses or reads its own files, so checks run side by side in a
thread pool of `jobs` workers. Check functions keep their signature (`run(root)` returns a
list of Results); the runner adds the timing and the events a progress display needs.
Results always come back in the built-in check order, whatever order checks finish in.
A check that raises is reported as failed with the exception, and the others still run.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from archform.verify import Check, Result, builtin_checks
from archform.verify.cache import cached, enabled


@dataclass(frozen=True, slots=True)
class CheckRun:
    """One check's results and its wall time."""

    check: str
    results: list[Result] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def status(self) -> Literal["passed", "failed", "skipped"]:
        """Failed if any result failed; skipped if all were skipped; passed otherwise."""
        statuses = {r.status for r in self.results}
        if "failed" in statuses:
            return "failed"
        if statuses <= {"skipped"}:
            return "skipped"
        return "passed"


@dataclass(frozen=True, slots=True)
class Event:
    """A check started (run is None) or finished (run holds its results)."""

    check: str
    run: CheckRun | None = None


Listener = Callable[[Event], None]


def default_jobs() -> int:
    """The CPUs this process may use (the affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _timed(check: Check, root: Path, listener: Listener | None, lock: threading.Lock) -> CheckRun:
    if listener is not None:
        with lock:
            listener(Event(check.name))
    start = time.perf_counter()
    try:
        results, _ = cached(check.name, root, check.tools, lambda: check.run(root))
    except Exception as exc:  # a crashing check must not take the others down
        results = [Result(check.name, ".", "failed", f"check raised {type(exc).__name__}: {exc}")]
    run = CheckRun(check.name, results, time.perf_counter() - start)
    if listener is not None:
        with lock:
            listener(Event(check.name, run))
    return run


def run_checks(
    root: Path,
    jobs: int = 1,
    listener: Listener | None = None,
    checks: Sequence[Check] | None = None,
    cache: bool = False,
) -> list[CheckRun]:
    """Run every applicable check (at most `jobs` at a time), in built-in order.

    With `cache`, a check whose inputs (the tree's files, its tools' versions) were checked
    before returns the stored results (verify.cache); inside a check, per-project work
    (ansible-lint of one project) is reused the same way.

    The tree is resolved first: the tools run with other working folders (ansible-lint's
    ``--project-dir`` refuses a relative path that does not exist from its own cwd).
    """
    if jobs < 1:
        raise ValueError("jobs must be at least 1")
    root = root.resolve()
    chosen = [c for c in (builtin_checks() if checks is None else checks) if c.applies(root)]
    lock = threading.Lock()
    with enabled(cache):
        if jobs == 1 or len(chosen) <= 1:
            return [_timed(c, root, listener, lock) for c in chosen]
        with ThreadPoolExecutor(
            max_workers=min(jobs, len(chosen)), thread_name_prefix="verify"
        ) as pool:
            futures = [pool.submit(_timed, c, root, listener, lock) for c in chosen]
            return [f.result() for f in futures]
