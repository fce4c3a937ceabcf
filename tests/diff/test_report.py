"""Rendering of values and Markdown cells."""

from __future__ import annotations

import pytest

from archform.diff.report import md_cell, value_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "(none)"),
        (True, "true"),
        (48.0, "48"),
        (0.5, "0.5"),
        (["us-east-1", "eu-west-1"], "[us-east-1, eu-west-1]"),
        (
            {"name": "home", "kind": "nfs", "capacity_tib": 1.0, "mount": "/home"},
            "kind=nfs capacity_tib=1",
        ),
        ("a\nb\tc", "a b c"),
        ("x" * 100, "x" * 77 + "..."),
    ],
)
def test_value_text(value: object, text: str) -> None:
    assert value_text(value) == text


def test_md_cell_neutralises_table_html_mentions_and_code() -> None:
    cell = md_cell("a | b <img src=x> `c` @org/team [l](u) *e* _f_")
    for raw in ("|", "<", ">", "`", "@", "[", "]", "*", "_"):
        assert raw not in cell
    assert "\n" not in md_cell("two\nlines")
