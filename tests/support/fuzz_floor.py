"""The fuzz floor, counted across pytest-xdist workers (issue 24).

Each process that ran fuzzers hands its per-command counts to the controller: an xdist
worker through `workeroutput` (read in `pytest_testnodedown`), a run without xdist directly.
The controller sums them in `pytest_sessionfinish` and, under the CI profile
(ARCHFORM_FUZZ=ci), fails the session below FLOOR runs or when a command got none. Before,
each worker asserted only its own share, and only when it happened to run every fuzzer.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from typing import Any

import pytest

FLOOR = 10_000
# every command the fuzzers must reach under the CI profile
COMMANDS = (
    "validate",
    "lint",
    "rule",
    "rules",
    "schema",
    "init",
    "estimate",
    "diff",
    "diagram",
    "generate",
    "plan",
    "verify",
    "deploy",
    "promote",
)
KEY = "archform_fuzz_runs"
_TOTAL = pytest.StashKey[Counter[str]]()


def _local() -> Counter[str]:
    module = sys.modules.get("spec.fuzz_support")
    runs: Counter[str] = getattr(module, "RUNS", Counter()) if module is not None else Counter()
    return runs


def total(config: pytest.Config) -> Counter[str]:
    """The counts handed in so far (the controller's own runs included at session end)."""
    return config.stash.setdefault(_TOTAL, Counter())


def node_down(config: pytest.Config, node: Any) -> None:
    """xdist controller: add one worker's counts."""
    total(config).update(getattr(node, "workeroutput", {}).get(KEY, {}))


def session_finish(session: pytest.Session) -> None:
    """Worker: hand the counts over. Controller (or no xdist): sum, report, enforce."""
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[KEY] = dict(_local())
        return
    runs = total(config)
    runs.update(_local())
    if not runs:
        return
    count = sum(runs.values())
    missing = [c for c in COMMANDS if not runs.get(c)]
    line = f"fuzz command runs (all workers): {count} {dict(sorted(runs.items()))}"
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(line)
    if os.environ.get("ARCHFORM_FUZZ") != "ci" or os.environ.get("ARCHFORM_FUZZ_FLOOR") == "0":
        return
    if count < FLOOR or missing:
        problem = f"FAILED fuzz floor: {count} < {FLOOR} runs" if count < FLOOR else "FAILED"
        if missing:
            problem += f"; commands never fuzzed: {', '.join(missing)}"
        if reporter is not None:
            reporter.write_line(problem, red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
