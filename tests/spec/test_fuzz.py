"""Random mutations of the bundled blueprints: a SpecError or a valid load, never anything else."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from archform.spec import SpecError, load_text
from support import bundled_blueprints, run_cli

TEXTS = [p.read_text() for p in bundled_blueprints()]
JUNK = [
    ":",
    "-",
    "\t",
    "{",
    "}",
    "[",
    "]",
    "&a",
    "*a",
    '"',
    "'",
    "\n",
    "#",
    " ",
    "!!",
    "?",
    "|",
    ">",
    "\x00",
    "\ufeff",
    "é",
    "0x1",
    "1e999",
    "%",
]
VALUES: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


def must_load_or_spec_error(text: str) -> None:
    try:
        load_text(text, "fuzz.yaml")
    except SpecError as exc:
        rendered = exc.problems[0].render()
        assert rendered.startswith("fuzz.yaml:") and "\n" not in rendered


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.integers(min_value=0, max_value=len(TEXTS) - 1),
    edits=st.lists(
        st.tuples(
            st.sampled_from(["insert", "delete", "dup_line", "swap"]),
            st.integers(0, 10**6),
            st.sampled_from(JUNK),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_text_mutations_never_crash(which: int, edits: list[tuple[str, int, str]]) -> None:
    text = TEXTS[which]
    for op, at, junk in edits:
        i = at % (len(text) + 1)
        if op == "insert":
            text = text[:i] + junk + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + 1 :]
        elif op == "dup_line":
            lines = text.splitlines(keepends=True)
            k = at % len(lines)
            lines.insert(k, lines[k])
            text = "".join(lines)
        else:
            lines = text.splitlines(keepends=True)
            k = at % len(lines)
            j = (at // 7) % len(lines)
            lines[k], lines[j] = lines[j], lines[k]
            text = "".join(lines)
    must_load_or_spec_error(text)


def paths(data: Any, loc: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [loc] if loc else []
    if isinstance(data, dict):
        for k, v in data.items():
            out += paths(v, (*loc, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += paths(v, (*loc, i))
    return out


DOCS = [doc for text in TEXTS for doc in YAML(typ="safe").load_all(text)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    which=st.integers(min_value=0, max_value=len(DOCS) - 1),
    pick=st.integers(0, 10**6),
    value=VALUES,
    delete=st.booleans(),
)
def test_value_mutations_never_crash(which: int, pick: int, value: Any, delete: bool) -> None:
    doc = json.loads(json.dumps(DOCS[which], default=str))
    locs = paths(doc)
    loc = locs[pick % len(locs)]
    node = doc
    for part in loc[:-1]:
        node = node[part]
    if delete and isinstance(node, dict):
        del node[loc[-1]]
    else:
        node[loc[-1]] = value
    text = json.dumps(doc, default=str, allow_nan=True)
    must_load_or_spec_error(text)


def test_cli_never_prints_a_traceback_on_mutants(tmp_path) -> None:
    text = TEXTS[0]
    mutants = [
        text.replace(":", "", 3),
        text.replace("  ", "\t", 1),
        text + "\n- stray",
        "{{{",
        "a: *nope\n",
    ]
    for i, mutant in enumerate(mutants):
        path = tmp_path / f"m{i}.yaml"
        path.write_text(mutant)
        result = run_cli(["validate", str(path)])
        assert result.returncode == 2, (mutant, result.stderr)
        assert "Traceback" not in result.stderr
        assert result.stderr.startswith(f"{path}:")
