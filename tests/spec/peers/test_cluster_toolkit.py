"""Cluster Toolkit blueprints read directly: findings at the task's own line, errors, import.

Each file under cluster_toolkit/ is a SkyPilot task written here. `# expect: CODE` sits on the exact
line of each finding (the set of (line, code) must match exactly); `# must-not: CODE, ...`
on the first line names what an expert would not report; `# error: LINE:COL` on the first
line marks a file SkyPilot's own schema (or archform) refuses, exit 2 at that position.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from archform.lint.engine import lint
from archform.lint.rule import load_rules
from archform.spec import SpecError, load_paths, load_text
from archform.spec.discovery import is_blueprint_text
from archform.spec.peers import reader_for
from archform.spec.peers.emit import render as render_import
from support import run_cli

HERE = Path(__file__).parent / "cluster_toolkit"
FILES = sorted(HERE.glob("*.yaml"))
TODAY = dt.date(2026, 11, 30)
EXPECT = re.compile(r"#\s*expect:\s*(.+)$")
MUST_NOT = re.compile(r"^#\s*must-not:\s*(.+)$")
ERROR = re.compile(r"^#\s*error:\s*(\d+):(\d+)$")


def _first(path: Path) -> str:
    return path.read_text("utf-8").splitlines()[0]


LINTED = [p for p in FILES if not ERROR.match(_first(p))]
REFUSED = [p for p in FILES if ERROR.match(_first(p))]


def _expected(path: Path) -> tuple[set[tuple[int, str]], set[str]]:
    pairs: set[tuple[int, str]] = set()
    must_not: set[str] = set()
    for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1):
        banned = MUST_NOT.match(line)
        if banned:
            must_not |= {c.strip() for c in banned.group(1).split(",")}
        elif match := EXPECT.search(line):
            pairs |= {(number, c.strip()) for c in match.group(1).split(",")}
    return pairs, must_not


def test_at_least_eight_blueprints() -> None:
    assert len(FILES) >= 8


@pytest.mark.parametrize("path", LINTED, ids=lambda p: p.stem)
def test_findings_at_the_blueprints_own_lines(path: Path) -> None:
    want, must_not = _expected(path)
    assert must_not, f"{path.name}: name what must not fire (# must-not: ...)"
    assert must_not <= set(load_rules().codes)
    result = lint(load_paths([path]), today=TODAY)
    got = {(f.line, f.rule) for f in result.findings}
    assert all(f.file == str(path) for f in result.findings)
    assert got == want, f"{path.name}: unexpected {got - want}, missing {want - got}"
    assert not must_not & {f.rule for f in result.findings}
    assert all(f.severity == "info" for f in result.findings if f.rule == "LNT003")


@pytest.mark.parametrize("path", REFUSED, ids=lambda p: p.stem)
def test_refused_blueprints_fail_at_their_line(path: Path) -> None:
    match = ERROR.match(_first(path))
    assert match
    with pytest.raises(SpecError) as caught:
        load_paths([path])
    (problem,) = caught.value.problems
    assert (problem.line, problem.column) == (int(match.group(1)), int(match.group(2)))


def test_misspelt_key_exits_2_with_did_you_mean() -> None:
    proc = run_cli(["lint", str(HERE / "misspelt_key.yaml")])
    assert proc.returncode == 2
    assert "misspelt_key.yaml:14:9:" in proc.stderr and "'settings'" in proc.stderr


def test_vars_references_resolve_and_count_as_mapped() -> None:
    (doc,) = load_paths([HERE / "spot_nodeset_vars.yaml"]).documents
    assert doc.peer is not None
    assert doc.peer.mapped["compute"]["instance_type"] == "a3-megagpu-8g"
    assert doc.peer.mapped["compute"]["nodes"] == 8
    assert "vars.machine" not in {n.path for n in doc.peer.notes}
    assert "vars.project_id" in {n.path for n in doc.peer.notes}


def test_detected_by_content_not_name() -> None:
    text = (HERE / "a3mega_debug.yaml").read_text("utf-8")
    assert is_blueprint_text(text)
    (doc,) = load_text(text, "cluster.yml").documents
    assert doc.peer is not None and doc.peer.format == "cluster-toolkit"
    assert reader_for({"deployment_groups": []}) is not None


@pytest.mark.parametrize("path", LINTED, ids=lambda p: p.stem)
def test_import_then_lint_gives_the_same_rule_codes(path: Path) -> None:
    loaded = load_paths([path])
    (doc,) = loaded.documents
    assert doc.peer is not None
    text = render_import(doc.peer, doc.file)
    source = {f.rule for f in lint(loaded, today=TODAY).findings if f.rule != "LNT003"}
    imported = {f.rule for f in lint(load_text(text, "imported.yaml"), today=TODAY).findings}
    assert imported == source
