"""SCH004 (a large Slurm cluster with one controller): the option and its range.

The threshold is more than 64 nodes without `backup_controller` (the rule's doc; slurm.conf(5),
SlurmctldHost: a second line adds a backup controller,
https://slurm.schedmd.com/slurm.conf.html#OPT_SlurmctldHost); the fixtures in
tests/rules/fixtures/SCH004 pin 64 (not flagged) and 65 (flagged). `max_nodes` moves it.
"""

from __future__ import annotations

import pydantic
import pytest
from rulecase import FIXTURES

from archform.lint.engine import lint
from archform.lint.finding import Finding
from archform.lint.rule import load_rules
from archform.spec import load_paths, load_text

EIGHT = FIXTURES / "SCH004" / "pass_8_nodes.yaml"


def _findings(max_nodes: int) -> list[Finding]:
    rule = load_rules().get("SCH004")
    assert rule is not None
    options = {"SCH004": rule.options(max_nodes=max_nodes)}
    return list(lint(load_paths([EIGHT]), rules=[rule], options=options).findings)


def test_option_moves_the_threshold() -> None:
    (hit,) = _findings(7)
    # `scheduler:` is written, so the finding sits there (line 10), not at compute.nodes
    assert (hit.line, hit.rule) == (10, "SCH004")
    assert hit.message == (
        "8 nodes depend on one slurmctld; threshold: a backup controller above 7 nodes"
    )
    assert hit.hint == "set scheduler.backup_controller: true"
    assert _findings(8) == []


def test_finding_sits_at_compute_nodes_without_a_scheduler_block() -> None:
    text = EIGHT.read_text("utf-8").replace("scheduler:\n  kind: slurm\n", "")
    assert "scheduler" not in text
    rule = load_rules().get("SCH004")
    assert rule is not None
    options = {"SCH004": rule.options(max_nodes=7)}
    (hit,) = lint(load_text(text, "t.yaml"), rules=[rule], options=options).findings
    assert hit.line == 7  # compute.nodes: the default Slurm scheduler is not written


def _accepted(value: int) -> bool:
    rule = load_rules().get("SCH004")
    assert rule is not None
    try:
        rule.options(max_nodes=value)
    except pydantic.ValidationError:
        return False
    return True


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        (-1, False),
        (0, False),
        (1, True),
        (2, True),
        (99_999, True),
        (100_000, True),
        (100_001, False),
    ],
)
def test_max_nodes_option_range(value: int, accepted: bool) -> None:
    # 0 would demand a backup controller for every Slurm cluster, one node included, which
    # the option is not for (write backup_controller instead), so it is refused; 1 is the
    # smallest. The ceiling is archform's cap for count thresholds, 100,000 (also INF003,
    # INF009): a value past it is a typo, refused at the config line.
    assert _accepted(value) is accepted
