"""Bundled data files read through the fast reader equal ruamel's safe load, value and type."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from archform.spec.datafile import load_data

DATA = Path(__file__).resolve().parents[2] / "src" / "archform" / "spec" / "data"
FILES = sorted(p.name for p in DATA.glob("*.yaml"))


def same(a: Any, b: Any, where: str = "") -> None:
    """Equal values of equal types all the way down (True == 1 and date == date are not enough)."""
    assert type(a) is type(b) or (isinstance(a, dict) and isinstance(b, dict)), (
        f"{where}: {type(a).__name__} vs {type(b).__name__}"
    )
    if isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys differ"
        for key in a:
            same(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert len(a) == len(b), f"{where}: lengths differ"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def test_every_data_file_is_covered() -> None:
    assert {"images.yaml", "addresses.yaml", "kubernetes.yaml"} <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_fast_read_equals_ruamel(name: str) -> None:
    reference = YAML(typ="safe", pure=True).load((DATA / name).read_text("utf-8"))
    same(load_data(name), reference, name)


def test_comparison_can_fail() -> None:
    with pytest.raises(AssertionError):
        same({"a": True}, {"a": 1})
    with pytest.raises(AssertionError):
        same({"d": dt.date(2026, 1, 1)}, {"d": "2026-01-01"})
