"""SkyPilot task YAML read directly: findings at the task's own line, errors, import.

Each file under skypilot/ is a SkyPilot task written here, with `# expect:` / `# must-not:`
markers, or `# error: LINE:COL` on its first line when SkyPilot's own schema (or archform)
refuses it, exit 2 at that position (tests/spec/peers/harness.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archform.spec import load_paths, load_text
from archform.spec.discovery import is_blueprint_text
from archform.spec.peers import reader_for
from spec.peers.harness import assert_findings, assert_refused, round_trip, split
from support import run_cli

HERE = Path(__file__).parent / "skypilot"
FILES = sorted(HERE.glob("*.yaml"))
LINTED, REFUSED = split(FILES)


def test_at_least_eight_tasks() -> None:
    assert len(FILES) >= 8


@pytest.mark.parametrize("path", LINTED, ids=lambda p: p.stem)
def test_findings_at_the_tasks_own_lines(path: Path) -> None:
    assert_findings(path)


@pytest.mark.parametrize("path", REFUSED, ids=lambda p: p.stem)
def test_refused_tasks_fail_at_their_line(path: Path) -> None:
    assert_refused(path)


def test_misspelt_key_exits_2_with_did_you_mean() -> None:
    proc = run_cli(["lint", str(HERE / "misspelt_key.yaml")])
    assert proc.returncode == 2
    assert "misspelt_key.yaml:5:3:" in proc.stderr and "'accelerators'" in proc.stderr


def test_detected_by_content_not_name() -> None:
    text = (HERE / "single_node.yaml").read_text("utf-8")
    assert is_blueprint_text(text)
    (doc,) = load_text(text, "anything.yml").documents
    assert doc.peer is not None and doc.peer.format == "skypilot"
    assert (
        reader_for({"HeadNode": {}, "run": "x"}) is None
        or reader_for({"HeadNode": {}, "run": "x"}).NAME != "skypilot"
    )


def test_accelerators_as_string_and_dict_pick_the_catalog_instance() -> None:
    (doc,) = load_paths([HERE / "gcs_training_data.yaml"]).documents
    assert doc.peer is not None
    assert doc.peer.mapped["compute"]["instance_type"].startswith("a2-")
    (doc,) = load_paths([HERE / "single_node.yaml"]).documents
    assert doc.peer is not None and doc.peer.mapped["compute"]["instance_type"] == "p5.48xlarge"


@pytest.mark.parametrize("path", LINTED, ids=lambda p: p.stem)
def test_import_then_lint_gives_the_same_rule_codes(path: Path) -> None:
    source, imported, _ = round_trip(path)
    assert imported == source
