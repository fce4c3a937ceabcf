"""View records: frozen, slotted dataclasses, turned into literals field by field.

The targets hand templates frozen dataclasses (mypy --strict checks every field); where a
record is embedded whole as a literal (settings.py, the fleet program's FLEET dict), its
keys come out in field order, and the quoting filters still refuse anything not plain.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path

import pytest

import archform.render.targets
from archform.render.filters import FilterError, ansible_literal, json_literal, py_literal
from archform.render.plain import plain


@dataclass(frozen=True, slots=True)
class _Inner:
    zeta: int
    alpha: str | None


@dataclass(frozen=True, slots=True)
class _Outer:
    name: str
    parts: list[_Inner]
    tags: dict[str, str]


_VALUE = _Outer("x", [_Inner(1, None), _Inner(2, "b")], {"k": "v"})


def test_plain_keeps_field_order_and_nests() -> None:
    assert plain(_VALUE) == {
        "name": "x",
        "parts": [{"zeta": 1, "alpha": None}, {"zeta": 2, "alpha": "b"}],
        "tags": {"k": "v"},
    }
    # field order, not alphabetical: zeta before alpha
    assert py_literal(_VALUE).index("'zeta'") < py_literal(_VALUE).index("'alpha'")


def test_filters_write_a_record_as_its_plain_form() -> None:
    assert ast.literal_eval(py_literal(_VALUE)) == plain(_VALUE)
    assert json_literal([_Inner(3, "c")]) == '[{"zeta": 3, "alpha": "c"}]'
    assert ansible_literal(_Inner(4, "{{ x }}")) == '{"zeta": 4, "alpha": !unsafe "{{ x }}"}'


class _Live:
    pass


@dataclass(frozen=True, slots=True)
class _Leaky:
    obj: object


def test_non_plain_values_inside_records_are_refused() -> None:
    with pytest.raises(TypeError):
        plain(_Leaky(_Live()))
    with pytest.raises(TypeError):
        plain({1: "non-string key"})
    with pytest.raises(FilterError):
        py_literal(_Live())


def _target_modules() -> list[str]:
    """Every module under render/targets (the writer's mutable report is no view)."""
    root = Path(archform.render.targets.__file__).parent
    found = pkgutil.walk_packages([str(root)], prefix="archform.render.targets.")
    return sorted(m.name for m in found)


def test_every_view_record_of_the_targets_is_frozen_and_slotted() -> None:
    records = []
    for name in _target_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == name
            ):
                records.append(value)
    assert len(records) > 30, "the view records were not found"
    for record in records:
        params = record.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen, f"{record.__module__}.{record.__name__} is not frozen"
        assert "__slots__" in vars(record), f"{record.__module__}.{record.__name__}: no slots"
