"""The recorded mutation score (bench/RESULTS-mutation.md) holds its floor.

Reads the results file only; `python bench/mutation.py` is what runs the mutants. Fails when
the total or a group's score is under 85%, when a listed group is missing, or when a
surviving mutant has no explanation.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "RESULTS-mutation.md"
FLOOR = 85.0
GROUPS = ("diff policy", "hostlist", "lint rules", "spec validators")
TOTAL = re.compile(r"^\*\*Total score: (\d+(?:\.\d+)?)%\*\*", re.M)


def _section(text: str, title: str) -> list[list[str]]:
    """The table rows (cells) under a `## title` heading."""
    rows: list[list[str]] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == title
            continue
        if inside and line.startswith("|") and not line.startswith("| ---"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows[1:]  # the header row


def problems(text: str) -> list[str]:
    """Everything wrong with one results file (empty: it holds)."""
    out: list[str] = []
    total = TOTAL.search(text)
    if total is None:
        out.append("no '**Total score: N%**' line")
    elif float(total.group(1)) < FLOOR:
        out.append(f"total score {total.group(1)}% < {FLOOR}%")
    groups = {row[0]: row for row in _section(text, "Per group")}
    for name in GROUPS:
        if name not in groups:
            out.append(f"group {name!r} missing")
            continue
        got = float(groups[name][5].rstrip("%"))
        if got < FLOOR:
            out.append(f"group {name!r}: {got}% < {FLOOR}%")
    for row in _section(text, "Surviving mutants"):
        why = row[-1]
        if not why or "UNEXPLAINED" in why or len(why) < 20:
            out.append(f"survivor {row[0]} at {row[1]} has no explanation")
    return out


def test_recorded_mutation_score_holds() -> None:
    assert problems(RESULTS.read_text("utf-8")) == []


_GOOD = """
**Total score: 91.0%** (91 of 100 killed; floor 85%), run time 1.0 min.

## Per group

| group | killed | survived | timeout | incompetent | score | time (s) | not run |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| diff policy | 9 | 1 | 0 | 0 | 90.0% | 1 | 0 |
| hostlist | 9 | 1 | 0 | 0 | 90.0% | 1 | 0 |
| lint rules | 9 | 1 | 0 | 0 | 90.0% | 1 | 0 |
| spec validators | 9 | 1 | 0 | 0 | 90.0% | 1 | 0 |

## Surviving mutants

| id | module:line:col | operator | mutant | why it survives |
| --- | --- | --- | --- | --- |
| abc | `m.py:1:2` | op | `- a == b` / `+ a <= b` | a is never above b: the list is sorted first |
"""


@pytest.mark.parametrize(
    ("edit", "complaint"),
    [
        (("91.0%**", "84.9%**"), "total score 84.9% < 85.0%"),
        (("| hostlist | 9 | 1 | 0 | 0 | 90.0%", "| hostlist | 8 | 2 | 0 | 0 | 80.0%"), "hostlist"),
        (("| lint rules |", "| lint-rules |"), "group 'lint rules' missing"),
        (("the list is sorted first", "UNEXPLAINED"), "survivor abc"),
        (("a is never above b: the list is sorted first", ""), "survivor abc"),
        (("**Total score", "Total score"), "no '**Total score"),
    ],
)
def test_the_check_fails_on_a_bad_results_file(edit: tuple[str, str], complaint: str) -> None:
    assert problems(_GOOD) == []
    bad = _GOOD.replace(*edit)
    assert bad != _GOOD
    assert any(complaint in p for p in problems(bad)), problems(bad)
