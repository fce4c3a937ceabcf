"""Issue 13, item 6: the libyaml composer builds the same node graph as ruamel's.

ruamel's composer is the reference (its positions are what tests/spec/broken/ pins); the
fast path must give identical kinds, tags, values and line:column marks, share alias
targets the same way, and hand every case it cannot vouch for back to ruamel.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from archform.spec import fastyaml, load_text
from archform.spec.errors import SpecError
from archform.spec.source import MAX_BYTES, _compose_with_ruamel, parse_documents
from support import BLUEPRINTS, ROOT

BROKEN = ROOT / "tests" / "spec" / "broken"


def shape(node: fastyaml.YNode | None, memo: dict[int, int] | None = None) -> Any:
    """A comparable picture of a graph; aliases appear as references to their first visit."""
    memo = {} if memo is None else memo
    if node is None:
        return None
    if id(node) in memo:
        return ("alias", memo[id(node)])
    memo[id(node)] = len(memo)
    head = (node.kind, node.tag, node.line, node.column)
    if node.kind == fastyaml.SEQ:
        return (*head, [shape(item, memo) for item in node.value])
    if node.kind == fastyaml.MAP:
        return (*head, [(shape(k, memo), shape(v, memo)) for k, v in node.value])
    return (*head, node.value)


def both(text: str) -> tuple[Any, Any]:
    fast = fastyaml.compose_all(text)
    assert fast is not None, "the fast path declined a file it should read"
    return [shape(r) for r in fast], [shape(r) for r in _compose_with_ruamel(text)]


@pytest.mark.parametrize("path", sorted(BLUEPRINTS.glob("*.yaml")), ids=lambda p: p.stem)
def test_bundled_blueprints_compose_identically(path: Path) -> None:
    fast, reference = both(path.read_text())
    assert fast == reference


def test_every_yaml_feature_blueprints_use_composes_identically() -> None:
    text = (
        "# comment\n"
        "version: 1\n"
        "defaults: &d {cpu: 4, mem: '16', tags: [a, \"b c\", 'd''e']}\n"
        "groups:\n"
        "  - <<: *d\n"
        "    name: one\n"
        "  - {<<: [*d], name: two}\n"
        "  - &anchored\n"
        "    name: three\n"
        "  - *anchored\n"
        "values: [~, null, Null, true, False, 0o17, 0x1F, 1_000, -.inf, .NaN, 1e3, 2027-06-30,\n"
        "  2027-06-30T10:00:00Z, yes, no, on, '010', 010, +1, -0.5, 1:30, =, '']\n"
        "block: |\n  line one\n  line two\n"
        "folded: >-\n  folded\n  text\n"
        'quoted: "tab\\tescape \\u00fc \\U0001F680"\n'
        "? complex key\n: value\n"
        "empty:\n"
        "seq_empty:\n  -\n  - \n  - x\n"
        "nested:\n  inner:\n# comment\n\n"
        "unicode: naïve café 🚀\n"
        "...\n"
        "---\n"
        "second: document\n"
        "---\n"
    )
    fast, reference = both(text)
    assert fast == reference
    assert (len(fast) == 3 and fast[2] is not None) or fast[2] is None


@pytest.mark.parametrize(
    "text",
    [
        "%YAML 1.1\n---\na: yes\n",  # a version directive changes resolution: ruamel decides
        'a: "x\u2028y"\n',  # a line break in YAML 1.1 (libyaml), a plain character in 1.2
        "a: b\u0085c\n",
        "a: [unclosed\n",  # every error is worded by ruamel
        "a: *nowhere\n",
        "a:\n\t- tab\n",
        "[" * 300 + "]" * 300,  # deeper than the fast path goes
        "a: {x: , y: 1}\n",  # an empty flow-mapping value: ruamel marks the ':'
        "a: {x: }\n",
    ],
)
def test_cases_it_cannot_vouch_for_go_to_ruamel(text: str) -> None:
    assert fastyaml.compose_all(text) is None


@pytest.mark.parametrize(
    "path", sorted(p for p in BROKEN.glob("*.yaml") if p.name != "yaml-invalid-utf8.yaml")
)
def test_broken_corpus_reads_the_same_either_way(path: Path) -> None:
    """Where libyaml accepts a broken file, its graph equals ruamel's (errors come later)."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    fast = fastyaml.compose_all(text)
    if fast is None:
        return
    assert [shape(r) for r in fast] == [shape(r) for r in _compose_with_ruamel(text)]


def host_inventory(count: int) -> str:
    base = (BLUEPRINTS / "onprem-h100-ib-lustre.yaml").read_text().rstrip()
    lines = [base, "hosts:", "  controller: {name: ctl01, address: 10.0.0.2}", "  compute:"]
    lines += [
        f"    - {{name: node{i:06d}, address: 10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}}}"
        for i in range(count)
    ]
    return "\n".join(lines) + "\n"


def test_a_ten_megabyte_blueprint_is_read_with_positions() -> None:
    text = host_inventory(215_000)
    assert 10_000_000 < len(text.encode()) < MAX_BYTES
    (doc,) = parse_documents(text, "big.yaml")
    last = len(text.splitlines())
    assert doc.source.keys[("hosts", "compute", 214_999, "name")].line == last
    assert doc.source.values[("hosts", "compute", 214_999, "address")].column == 35


def test_positions_of_a_large_file_match_ruamel() -> None:
    text = host_inventory(3_000)
    fast, reference = both(text)
    assert fast == reference


def test_alias_expansion_is_still_bounded() -> None:
    text = "version: 1\na: &x [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: [" + ", ".join(["*x"] * 30_000)
    text += "]\n"
    with pytest.raises(SpecError) as caught:
        load_text(text, "bomb.yaml")
    assert "aliases expand to more than 250,000 YAML nodes" in str(caught.value)
