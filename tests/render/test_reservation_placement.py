"""generate puts no cluster placement group on nodes a named reservation already places."""

from __future__ import annotations

from pathlib import Path

import pytest

from archform.providers.aws.render.training import settings
from archform.spec import load_text
from archform.spec.models import TrainingCluster

NET004 = Path(__file__).parents[1] / "rules" / "fixtures" / "NET004"


def _settings(name: str, colocation: str | None = None) -> dict[str, object]:
    text = (NET004 / name).read_text("utf-8")
    if colocation is not None:
        text = text.replace("colocation: none", f"colocation: {colocation}")
    (doc,) = load_text(text, name).documents
    assert isinstance(doc.model, TrainingCluster)
    values, _, _ = settings(doc.model)
    return dict(values)


@pytest.mark.parametrize(
    "name", ["pass_p5_targeted_reservation.yaml", "pass_p5_capacity_block.yaml"]
)
def test_reserved_nodes_get_no_placement_group_even_with_colocation_cluster(name: str) -> None:
    values = _settings(name, colocation="cluster")
    assert values["PLACEMENT_STRATEGY"] is None
    assert [g.placement_group for g in values["GROUPS"]] == [False]  # type: ignore[attr-defined]


def test_on_demand_nodes_with_colocation_cluster_get_the_placement_group() -> None:
    values = _settings("fail_p5_without_reservation.yaml", colocation="cluster")
    assert values["PLACEMENT_STRATEGY"] == "cluster"
    assert [g.placement_group for g in values["GROUPS"]] == [True]  # type: ignore[attr-defined]
