"""Meta-tests of the rule catalog: codes, names, docs, fixtures, examples, references."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from archform.lint.engine import lint
from archform.lint.rule import CODE_RE, NAME_RE, SECTIONS, Registry, Rule, load_rules, sections
from archform.spec import load_text
from support import ROOT

FIXTURES = Path(__file__).parent / "fixtures"
TODAY = dt.date(2026, 11, 30)
RULES = list(load_rules())
CATALOG = ROOT.parent / "shared" / "design" / "rules-v1.md"


def _ids(rule: Rule) -> str:
    return rule.code


def test_codes_unique_and_well_formed() -> None:
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes))
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    for r in RULES:
        assert CODE_RE.fullmatch(r.code), r.code
        assert NAME_RE.fullmatch(r.name), r.name
        assert r.severity in ("error", "warning", "info")
        assert re.fullmatch(r"\d+\.\d+\.\d+", r.since)


def test_registry_rejects_duplicate_code() -> None:
    registry = Registry()
    first = RULES[0]
    registry.add(first)
    with pytest.raises(ValueError, match="duplicate rule code"):
        registry.add(first)


def test_every_v1_rule_is_implemented() -> None:
    """The catalog contract: the 45 codes and names of rules-v1.md, same severities."""
    if not CATALOG.is_file():
        pytest.skip("shared/design/rules-v1.md is not beside the repository")
    rows = re.findall(
        r"^\| ([A-Z]{3}\d{3}) \| ([a-z0-9-]+) \|.*\| (error|warning|info) \|",
        CATALOG.read_text("utf-8"),
        re.M,
    )
    contract = {code: (name, sev) for code, name, sev in rows}
    assert len(contract) == 45
    # Deliberate departures from rules-v1, each decided in an issue:
    # SCH001 widened from removed options to options unknown to or removed in the declared
    # version (one Slurm option table per release); INF011 added (Kubernetes end of support);
    # SEC004 added (a public serving edge without TLS, issue 20's hardened public edge);
    # LNT003 added (issue 25: a key of another tool's file that archform does not map).
    renamed = {"SCH001": ("removed-slurm-option", "unknown-slurm-option")}
    added = {
        "INF011": ("kubernetes-end-of-support", "warning"),
        "SEC004": ("plain-http-edge", "warning"),
        # issue 22: feasibility rules the open-model table and GPU precisions make checkable
        "TRN009": ("precision-unsupported-by-gpu", "error"),
        "TRN010": ("training-state-does-not-fit", "error"),
        "INF012": ("context-beyond-trained-maximum", "error"),
        "INF013": ("tensor-parallel-splits-heads", "error"),
        "LNT003": ("peer-key-not-mapped", "info"),
    }
    for code, (old, new) in renamed.items():
        assert contract[code][0] == old
        contract[code] = (new, contract[code][1])
    implemented = {r.code: (r.name, r.severity) for r in RULES}
    assert implemented == {**contract, **added}


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_docstring_sections(rule: Rule) -> None:
    found = sections(rule.doc)
    assert list(found) == list(SECTIONS), f"{rule.code}: sections {list(found)}"
    assert all(found[s] for s in SECTIONS), f"{rule.code}: empty section"
    assert rule.summary.endswith("."), rule.code
    assert rule.module.endswith(f"{rule.code.lower()}_{rule.name.replace('-', '_')}")


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_fixtures_present(rule: Rule) -> None:
    names = [p.name for p in (FIXTURES / rule.code).glob("*.yaml")]
    assert any(n.startswith("pass_") for n in names), f"{rule.code}: no pass_*.yaml"
    assert any(n.startswith("fail_") for n in names), f"{rule.code}: no fail_*.yaml"


def _example(rule: Rule, section: str) -> str:
    match = re.search(r"```yaml\n(.*?)```", rule.section(section), re.S)
    assert match, f"{rule.code}: no ```yaml block in {section}"
    return match.group(1)


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_docstring_examples_fire_as_claimed(rule: Rule) -> None:
    bad = lint(load_text(_example(rule, "Example"), "example.yaml"), rules=[rule], today=TODAY)
    assert any(f.rule == rule.code for f in bad.findings), f"{rule.code}: Example does not fire"
    good = lint(load_text(_example(rule, "Use instead"), "fixed.yaml"), rules=[rule], today=TODAY)
    assert not good.findings, f"{rule.code}: Use instead fires: {good.findings[0].message}"


def test_no_fixture_folder_without_rule() -> None:
    codes = {r.code for r in RULES}
    assert {p.name for p in FIXTURES.iterdir() if p.is_dir()} <= codes


# References cite what a user can open: a URL, or a paper (arXiv id, DOI, or a quoted
# title with venue and year). Never files outside the repository (design notes, the
# article the rules were first drafted from).
_URL = re.compile(r"https?://\S+")
_PAPER = re.compile(r'arXiv:\d{4}\.\d{4,5}|doi\.org/|\bdoi:|"[^"]{10,}",[^"]*\b(19|20)\d\d\b')
_PRIVATE = re.compile(
    r"shared/|\.\./|seed article|reference/|/work/|training-clusters\.md|\.md s\d"
)


def reference_problems(doc: str) -> list[str]:
    """Why a rule docstring's references are not public sources ('' list when fine)."""
    problems = [f"private source {m.group(0)!r}" for m in _PRIVATE.finditer(doc)]
    refs = sections(doc).get("References", "").strip()
    if not refs:
        return [*problems, "no References section"]
    items: list[str] = []
    for line in refs.splitlines():
        if line.startswith("- "):
            items.append(line[2:])
        elif items and line.startswith("  "):
            items[-1] += " " + line.strip()
        elif line.strip():
            problems.append(f"reference text outside a '- ' item: {line!r}")
    for item in items:
        if not (_URL.search(item) or _PAPER.search(item)):
            problems.append(f"neither a URL nor a paper: {item!r}")
    return problems


@pytest.mark.parametrize("rule", RULES, ids=_ids)
def test_references_are_public_sources(rule: Rule) -> None:
    assert reference_problems(rule.doc) == []


def test_reference_check_rejects_private_sources() -> None:
    good = (
        "x\n\n## References\n- NCCL: https://docs.nvidia.com/x\n- Zhao et al., arXiv:2304.11277\n"
    )
    assert reference_problems(good) == []
    assert reference_problems(good.replace("https://docs.nvidia.com/x", "the NCCL docs"))
    assert reference_problems(good + "- seed article FAQ\n")
    assert reference_problems(good + "- shared/reference/training-clusters.md s6\n")
    assert reference_problems("x\n\n## What it does\nthing\n")
