"""Governed suppressions: reason required, expiry (LNT001), unused (LNT002), still reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from archform.lint.engine import lint
from archform.spec import SpecError, load_text
from support import run_cli
from support.lint_cases import TODAY

FLEET = """\
version: 1
kind: InferenceFleet
name: eu
placement: {provider: aws, regions: [eu-central-1]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
system_pool: {instance_type: m6i.xlarge}
autoscaling: {metric: queue_depth, target: 8}
lint:
  ignore:
"""


def _fleet(entries: str) -> str:
    return FLEET + entries


def test_reason_is_required_at_load() -> None:
    with pytest.raises(SpecError) as exc:
        load_text(_fleet("    - rule: INF001\n      owner: me\n"), "f.yaml")
    assert "reason" in str(exc.value)
    assert exc.value.problems[0].line == 12


def test_valid_suppression_marks_finding_and_keeps_it() -> None:
    text = _fleet("    - {rule: INF001, reason: data residency, owner: ml, expires: 2027-01-01}\n")
    result = lint(load_text(text, "f.yaml"), today=TODAY)
    inf001 = [f for f in result.findings if f.rule == "INF001"]
    assert len(inf001) == 1 and inf001[0].suppressed
    assert inf001[0].justification == "data residency; owner: ml; expires: 2027-01-01"
    assert not result.active()


def test_expired_suppression_reports_lnt001_and_does_not_suppress() -> None:
    text = _fleet("    - {rule: INF001, reason: pilot, expires: 2026-11-29}\n")
    result = lint(load_text(text, "f.yaml"), today=TODAY)
    codes = {(f.rule, f.suppressed) for f in result.findings}
    assert codes == {("INF001", False), ("LNT001", False)}
    lnt = next(f for f in result.findings if f.rule == "LNT001")
    assert lnt.path == "lint.ignore[0].expires" and lnt.line == 12


def test_today_comes_from_environment(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(_fleet("    - {rule: INF001, reason: pilot, expires: 2026-06-01}\n"))
    before = run_cli(["lint", str(path), "--format", "json"], env={"ARCHFORM_TODAY": "2026-05-01"})
    after = run_cli(["lint", str(path), "--format", "json"], env={"ARCHFORM_TODAY": "2026-06-02"})
    assert before.returncode == 0, before.stdout + before.stderr
    assert after.returncode == 1
    rules = [f["rule"] for f in json.loads(after.stdout)["findings"]]
    assert rules == ["INF001", "LNT001"] or sorted(rules) == ["INF001", "LNT001"]
    bad = run_cli(["lint", str(path)], env={"ARCHFORM_TODAY": "tomorrow"})
    assert bad.returncode == 2 and "ARCHFORM_TODAY" in bad.stderr


def test_unused_suppression_lnt002_even_when_rule_not_selected() -> None:
    text = FLEET.replace("[eu-central-1]", "[eu-central-1, eu-west-2]") + (
        "    - {rule: INF001, reason: single region pilot}\n"
    )
    blueprints = load_text(text, "f.yaml")
    from archform.lint.rule import load_rules

    only = [load_rules().get("LNT002")]
    result = lint(blueprints, rules=[r for r in only if r], today=TODAY)
    assert [(f.rule, f.path) for f in result.findings] == [("LNT002", "lint.ignore[0].rule")]


def test_suppressed_findings_in_json_and_sarif(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_text(_fleet("    - {rule: INF001, reason: data residency}\n"))
    js = run_cli(["lint", str(path), "--format", "json"])
    assert js.returncode == 0
    found = json.loads(js.stdout)["findings"]
    assert [(f["rule"], f["suppressed"], f["justification"]) for f in found] == [
        ("INF001", True, "data residency")
    ]
    sarif = json.loads(run_cli(["lint", str(path), "--format", "sarif"]).stdout)
    result = sarif["runs"][0]["results"][0]
    assert result["suppressions"] == [{"kind": "inSource", "justification": "data residency"}]
