"""Fuzz every command in process: mutated bundled blueprints never produce exit 3 or a traceback.

Profiles (tests/spec/conftest.py): ARCHFORM_FUZZ=dev (default, small) or ci (.ci/run: more
than 5,000 command runs). Commands run through the real entry point's error handling
(`archform.cli._core.run`) with typer's CliRunner streams, so an exit code here is the one a
user would see.
"""

from __future__ import annotations

import ast
import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from archform.lint.rule import load_rules
from archform.render.generate import build_files
from archform.spec import SpecError, load_text
from spec.fuzz_support import (
    CIDRS,
    FREE_TEXT,
    HAZARDS,
    RUNS,
    TEXTS,
    VALUES,
    assert_no_crash,
    copy,
    documents,
    dump,
    dump_raw,
    examples,
    invoke,
    locations,
    put,
)

DOCS = documents()
FAST = ("validate", "lint", "estimate", "diff", "diagram")


def _write(tmp: Path, name: str, text: str) -> str:
    path = tmp / name
    path.write_text(text, "utf-8")
    return str(path)


def _mutant(which: int, pick: int, value: Any) -> tuple[str, str]:
    """(blueprint stem, YAML text) with one location of one document set to `value`."""
    stem, index, _ = DOCS[which % len(DOCS)]
    docs = [copy(d) for s, _, d in DOCS if s == stem]
    locs = locations(docs[index])
    put(docs[index], locs[pick % len(locs)], value)
    return stem, dump_raw(docs)


def _fast_commands(stem: str, text: str) -> None:
    with tempfile.TemporaryDirectory(prefix="archform-fuzz-") as tmp:
        old = _write(Path(tmp), "old.yaml", TEXTS[stem])
        new = _write(Path(tmp), "new.yaml", text)
        runs = {
            "validate": ("validate", new),
            "lint": ("lint", new, "--format", "json"),
            "estimate": ("estimate", new),
            "diff": ("diff", old, new),
            "diagram": ("diagram", new, "--format", "mermaid"),
        }
        for name in FAST:
            assert_no_crash(invoke(*runs[name]))


@settings(max_examples=examples(3.5))
@given(which=st.integers(0, 10**6), pick=st.integers(0, 10**6), value=VALUES)
def test_value_mutations_never_crash_any_fast_command(which: int, pick: int, value: Any) -> None:
    _fast_commands(*_mutant(which, pick, value))


@settings(max_examples=examples(0.5))
@given(which=st.integers(0, 10**6), pick=st.integers(0, 10**6), value=HAZARDS)
def test_numbers_dates_and_booleans_never_crash_any_fast_command(
    which: int, pick: int, value: Any
) -> None:
    _fast_commands(*_mutant(which, pick, value))


@settings(max_examples=examples(0.25))
@given(
    option=st.sampled_from(["--tokens-per-gpu", "--utilization", "--overhead-gib"]),
    value=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.sampled_from(["nan", "inf", "-inf", "1e300", "-5", "0", "1e-320", "true"]),
    ),
)
def test_estimate_number_options_never_crash(option: str, value: str) -> None:
    fleet = str(Path(__file__).parents[2] / "blueprints" / "inference-3region-a10.yaml")
    assert_no_crash(invoke("estimate", fleet, option, value))


CIDR_FIELDS = [
    (stem, i, loc)
    for stem, i, data in DOCS
    for loc in locations(data)
    if loc[-1] == "cidr" or (len(loc) > 1 and isinstance(loc[-1], int) and "cidrs" in str(loc[-2]))
]


@settings(max_examples=examples(0.5))
@given(which=st.integers(0, 10**6), cidr=CIDRS)
def test_ipv4_ipv6_swaps_are_validated_not_crashed(which: int, cidr: str) -> None:
    stem, index, loc = CIDR_FIELDS[which % len(CIDR_FIELDS)]
    docs = [copy(d) for s, _, d in DOCS if s == stem]
    put(docs[index], loc, cidr)
    with tempfile.TemporaryDirectory(prefix="archform-fuzz-") as tmp:
        path = _write(Path(tmp), "b.yaml", dump(docs))
        checked = invoke("validate", path)
        assert_no_crash(checked)
        ipv4_only = "network" in loc or "api_access_cidrs" in loc
        if ipv4_only and ":" in cidr:
            assert checked.code == 2 and "IPv6 range" in checked.stderr, checked.explain()
        for args in (("lint", path), ("diagram", path, "--format", "mermaid")):
            assert_no_crash(invoke(*args))


FREE_TEXT_FIELDS = [
    (stem, i, loc)
    for stem, i, data in DOCS
    for loc in locations(data)
    # scheduler.accounts[].description is not free text: it reaches sacctmgr and is
    # restricted to a safe character set at validation (tested in tests/spec).
    if loc[-1] in ("description", "reason") and "accounts" not in loc
]


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in _strings(k) + _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


def _survives(path: str, content: str, value: str) -> None:
    """Parse one generated file; where it carries the value, the value must come back."""
    if path.endswith((".yaml", ".yml")):
        found = [s for d in YAML(typ="safe").load_all(content) for s in _strings(d)]
    elif path.endswith(".py"):
        tree = ast.parse(content, path)
        found = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
        found = [s for s in found if isinstance(s, str)]
    elif path.endswith(".json"):
        found = _strings(json.loads(content))
    else:
        return
    assert any(value in s for s in found), f"{path}: {value!r} lost"


@settings(max_examples=examples(0.15))
@given(which=st.integers(0, 10**6), text=FREE_TEXT)
def test_unicode_free_text_round_trips_through_every_generated_file(which: int, text: str) -> None:
    stem, index, loc = FREE_TEXT_FIELDS[which % len(FREE_TEXT_FIELDS)]
    docs = [copy(d) for s, _, d in DOCS if s == stem]
    pristine = {f.path: f.content for f in build_files(load_text(dump(docs), "b.yaml"))}
    put(docs[index], loc, text)
    source = dump(docs)
    with tempfile.TemporaryDirectory(prefix="archform-fuzz-") as tmp:
        path = _write(Path(tmp), "b.yaml", source)
        for args in (("validate", path), ("lint", path)):
            outcome = invoke(*args)
            assert_no_crash(outcome)
            assert outcome.code in (0, 1), outcome.explain()
    try:
        files = build_files(load_text(source, "b.yaml"))
    except SpecError as exc:  # pragma: no cover - the assertion explains
        raise AssertionError(f"{text!r} in {loc} was refused: {exc}") from exc
    changed = [f for f in files if pristine.get(f.path) != f.content]
    assert any(f.path.endswith("resolved-blueprint.yaml") for f in changed)
    for f in changed:
        content = f.content if isinstance(f.content, str) else f.content.decode("utf-8")
        _survives(f.path, content, text)
        if f.path.endswith(".sh"):
            subprocess.run(["bash", "-n"], input=content, text=True, check=True)


@settings(max_examples=examples(0.1))
@given(which=st.integers(0, 10**6), pick=st.integers(0, 10**6), value=VALUES, plan=st.booleans())
def test_generate_and_plan_never_crash(which: int, pick: int, value: Any, plan: bool) -> None:
    stem, text = _mutant(which, pick, value)
    with tempfile.TemporaryDirectory(prefix="archform-fuzz-") as tmp:
        path = _write(Path(tmp), "b.yaml", text)
        assert_no_crash(invoke("generate", path, "-o", str(Path(tmp) / "out")))
        # plan runs the Pulumi programs under mocks (seconds each): only for the cheap ones.
        if plan and stem in ("onprem-cpu-smoke", "aws-p5-efa-fsx", "gcp-a3-mega-tcpxo"):
            assert_no_crash(invoke("plan", path))


CODES = [r.code for r in load_rules()]


@settings(max_examples=examples(1.5))
@given(code=st.one_of(st.sampled_from(CODES), st.text(max_size=12)), fmt=st.text(max_size=6))
def test_rule_rules_and_schema_never_crash(code: str, fmt: str) -> None:
    if code.startswith("-"):
        code = "X" + code
    assert_no_crash(invoke("rule", code))
    assert_no_crash(invoke("rules", "--format", fmt or "md"))


def test_schema_runs() -> None:
    outcome = invoke("schema")
    assert outcome.code == 0 and json.loads(outcome.stdout)["$schema"]


def test_case_count_summary(capsys: pytest.CaptureFixture[str]) -> None:
    # What this process's fuzzers ran so far; the floor itself (10,000 runs, every command)
    # is summed across xdist workers and enforced in tests/support/fuzz_floor.py.
    with capsys.disabled():
        print(
            f"\nfuzz command runs (this worker): {sum(RUNS.values())} {dict(sorted(RUNS.items()))}"
        )
