"""An unknown instance type is one error at its line, not a cascade of what it would fill.

The catalog fills `gpu`, `cpu`, `memory_gib` and `fabric` from a known type; with a typo the
model also reported "missing required key 'fabric'" with an on-prem hint (issue 21).
"""

from __future__ import annotations

import pytest

from archform.spec import SpecError, load_text
from support import BLUEPRINTS


def _problems(preset: str, old: str, new: str) -> list[str]:
    text = (BLUEPRINTS / f"{preset}.yaml").read_text("utf-8")
    assert f"instance_type: {old}" in text
    with pytest.raises(SpecError) as caught:
        load_text(text.replace(f"instance_type: {old}", f"instance_type: {new}"), "bp.yaml")
    return [p.render() for p in caught.value.problems]


@pytest.mark.parametrize(
    ("preset", "old", "typo", "meant"),
    [
        ("aws-p5-efa-fsx", "p5.48xlarge", "p5.48xlarg", "p5.48xlarge"),
        ("azure-nd-h100-v5", "Standard_ND96isr_H100_v5", "Standard_ND96isr_H100_v6", None),
        ("gcp-a3-mega-tcpxo", "a3-megagpu-8g", "a3-megagpu-8", "a3-megagpu-8g"),
    ],
)
def test_misspelt_cloud_type_is_one_error_with_did_you_mean(
    preset: str, old: str, typo: str, meant: str | None
) -> None:
    text = (BLUEPRINTS / f"{preset}.yaml").read_text("utf-8")
    line = text[: text.index(f"instance_type: {old}")].count("\n") + 1
    (only,) = _problems(preset, old, typo)
    assert only.startswith(f"bp.yaml:{line}:")
    assert f"instance type {typo!r} is not in archform's catalog" in only
    assert f"did you mean {(meant or old)!r}" in only
    assert "on-prem" not in only


def test_unknown_cpu_type_on_a_cloud_names_the_type_not_on_prem() -> None:
    (only,) = _problems("aws-p5-efa-fsx", "p5.48xlarge", "zz-custom-box")
    assert "missing required key 'fabric'" in only
    assert "does not know aws instance type 'zz-custom-box'" in only
    assert "on-prem" not in only
