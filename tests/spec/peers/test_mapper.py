"""The peer framework on its own: positions carried over, notes once, names, list order."""

from __future__ import annotations

import pytest

from archform.spec import SpecError
from archform.spec.errors import Pos
from archform.spec.peers.mapper import Mapper, name_from_file
from archform.spec.source import parse_documents

PEER = """\
Top:
  Size: 4
  Items:
    - {Name: a}
    - {Name: b}
  Odd: 1
"""


def _mapper() -> Mapper:
    (raw,) = parse_documents(PEER, "peer.yaml")
    return Mapper(raw, "demo", "Demo format")


def test_put_positions_values_at_the_peer_key_and_fills_containers() -> None:
    m = _mapper()
    m.put(("compute", "nodes"), 4, ("Top", "Size"))
    m.put(("storage", 0, "name"), "a", ("Top", "Items", 0, "Name"))
    m.put(("storage", 1, "name"), "b", ("Top", "Items", 1, "Name"))
    raw, info = m.finish()
    assert raw.data["compute"] == {"nodes": 4}
    assert [s["name"] for s in raw.data["storage"]] == ["a", "b"]
    assert raw.source.keys[("compute", "nodes")] == Pos(2, 3)
    assert raw.source.values[("compute", "nodes")] == Pos(2, 9)
    assert raw.source.keys[("compute",)] == Pos(2, 3)  # a container: its first value
    assert raw.source.keys[("storage", 1, "name")] == Pos(5, 8)
    assert info.origins[("compute", "nodes")].path == "Top.Size"
    assert (raw.data["version"], raw.data["kind"], raw.data["name"]) == (
        1,
        "TrainingCluster",
        "peer",
    )


def test_list_indices_must_come_in_order() -> None:
    m = _mapper()
    with pytest.raises(IndexError):
        m.put(("storage", 1, "name"), "b", ("Top", "Items", 1, "Name"))


def test_notes_once_each_positioned_for_lint() -> None:
    m = _mapper()
    m.rest(("Top",), ("Size", "Items"), {"Odd": "no counterpart here"})
    m.unmapped(("Top", "Odd"), "again")
    m.warn(("Top", "Size"), "a caveat")
    raw, info = m.finish()
    assert [(n.path, n.severity, n.message) for n in info.notes] == [
        ("Top.Odd", "info", "no counterpart here"),
        ("Top.Size", "warning", "a caveat"),
    ]
    assert raw.source.keys[("peer", "Top", "Odd")] == Pos(6, 3)


def test_unknown_keys_and_bad_values_are_errors_at_their_lines() -> None:
    m = _mapper()
    m.keys(("Top",), ("Size", "Items", "Odd2"))
    m.one_of(("Top", "Size"), ("small",))
    with pytest.raises(SpecError) as caught:
        m.finish()
    assert [p.render() for p in caught.value.problems] == [
        "peer.yaml:2:9: error: Top.Size: Must be one of: small.",
        "peer.yaml:6:3: error: Top.Odd: Unknown field. (hint: did you mean 'Odd2'?)",
    ]


@pytest.mark.parametrize(
    ("display", "name"),
    [
        ("clusters/p5_Train.yaml", "p5-train"),
        ("cluster.yaml", "cluster"),
        ("9.yaml", "peer-9"),
        ("___.yml", "peer"),
        ("x" * 60 + ".yaml", "x" * 39),
    ],
)
def test_names_from_files_are_archform_names(display: str, name: str) -> None:
    assert name_from_file(display) == name
