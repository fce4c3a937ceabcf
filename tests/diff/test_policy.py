"""The update-policy table: coverage of every model field, lookup rules, the default."""

from __future__ import annotations

import types
import typing
from typing import Any

import pytest
from pydantic import BaseModel

from archform.diff.changes import Edit
from archform.diff.impact import Impact
from archform.diff.policy import DEFAULT_IMPACT, RULES, classify, lookup
from archform.spec.models import InferenceFleet, Platform, TrainingCluster

STRUCTURAL = {"version", "kind", "name"}  # identify a document; never a change of one


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The model class inside Optional/list/Annotated, and whether a list was crossed."""
    listed = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            models = [a for a in args if isinstance(a, type) and issubclass(a, BaseModel)]
            annotation = models[0] if models else args[0]
        elif origin is list:
            annotation, listed = typing.get_args(annotation)[0], True
        else:
            return annotation, listed


def leaf_paths(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, info in model.model_fields.items():
        if not prefix and name in STRUCTURAL:
            continue
        path = f"{prefix}.{name}" if prefix else name
        inner, listed = _unwrap(info.annotation)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            out += leaf_paths(inner, path + ("[]" if listed else ""))
        else:
            out.append(path)
    return out


KINDS = [TrainingCluster, InferenceFleet, Platform]


@pytest.mark.parametrize("model", KINDS, ids=lambda m: m.__name__)
def test_every_field_of_every_kind_has_a_policy_row(model: type[BaseModel]) -> None:
    kind = model.__name__
    paths = leaf_paths(model)
    assert len(paths) > 5
    uncovered = [p for p in paths if lookup(kind, p) is None]
    assert uncovered == [], f"add rows to diff/policy.py for {uncovered}"


def test_patterns_are_unique_per_kind_and_reasons_are_one_line() -> None:
    seen = set()
    for rule in RULES:
        key = (rule.kind, rule.pattern)
        assert key not in seen, key
        seen.add(key)
        assert rule.reason.strip() and "\n" not in rule.reason


def _edit(pattern: str, old: Any = 1, new: Any = 2) -> Edit:
    loc = tuple(pattern.split("."))
    return Edit(pattern, pattern, loc, old, new, {}, {})


def test_unlisted_path_gets_the_conservative_default() -> None:
    verdict = classify("TrainingCluster", _edit("some_future_field"))
    assert verdict.impact == DEFAULT_IMPACT == Impact.NODE_REPLACEMENT
    assert verdict.rule is None and "conservative default" in verdict.reason


def test_longest_pattern_wins() -> None:
    assert lookup("InferenceFleet", "server.tensor_parallel").pattern == "server.tensor_parallel"
    assert lookup("InferenceFleet", "server.image").pattern == "server"
    assert lookup("InferenceFleet", "gpu_pool.max_nodes_per_region").impact == Impact.IN_PLACE
    assert lookup("InferenceFleet", "gpu_pool.instance_type").impact == Impact.NODE_REPLACEMENT


def test_pattern_matches_on_segment_boundaries_only() -> None:
    # "training" (Platform) must not cover a hypothetical "training_bucket" field
    assert lookup("Platform", "training_bucket") is None
    assert lookup("Platform", "training") is not None


def test_common_rows_apply_to_every_kind() -> None:
    for kind in ("TrainingCluster", "InferenceFleet", "Platform"):
        assert lookup(kind, "labels.team").impact == Impact.IN_PLACE


def test_impact_parse_accepts_cli_and_human_spellings() -> None:
    assert Impact.parse("data-loss-risk") is Impact.DATA_LOSS_RISK
    assert Impact.parse("cluster-wide outage") is Impact.CLUSTER_WIDE_OUTAGE
    assert Impact.CLUSTER_WIDE_OUTAGE.label == "cluster-wide outage"
    with pytest.raises(ValueError, match="choose one of"):
        Impact.parse("catastrophic")


@pytest.mark.parametrize(
    "path",
    [
        "placement.network.cidr",
        "placement.network.service_cidr",
        "placement.network.pod_cidr",
        "placement.network.control_plane_cidr",
    ],
)
def test_fleet_network_range_change_is_an_outage(path: str) -> None:
    """Subnets, Service and pod ranges are fixed at creation (EKS serviceIpv4Cidr: "Update
    requires: Replacement"): a new range recreates each region's network and cluster."""
    rule = lookup("InferenceFleet", path)
    assert rule is not None and rule.pattern == "placement.network", rule
    assert rule.impact is Impact.CLUSTER_WIDE_OUTAGE


def _longest(kind: str, path: str) -> str | None:
    rows = [r.pattern for r in RULES if r.kind in (kind, "*") and r.matches(path)]
    return max(rows, key=len) if rows else None


@pytest.mark.parametrize("order", ["as written", "reversed"])
@pytest.mark.parametrize("model", KINDS, ids=lambda m: m.__name__)
def test_the_longest_pattern_wins_whatever_the_row_order(
    model: type[BaseModel], order: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from archform.diff import policy

    if order == "reversed":
        monkeypatch.setattr(policy, "RULES", tuple(reversed(RULES)))
    kind = model.__name__
    paths = leaf_paths(model)
    nested = [p for p in paths if len([r for r in RULES if r.matches(p)]) > 1]
    assert nested, "some path is covered by a row and a more specific one"
    for path in paths:
        found = lookup(kind, path)
        assert (found.pattern if found else None) == _longest(kind, path), path


def test_a_verdict_is_an_immutable_value() -> None:
    import dataclasses

    verdict = classify("InferenceFleet", _edit("server.image"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.impact = Impact.IN_PLACE  # type: ignore[misc]
    assert not hasattr(verdict, "__dict__")  # slots: one per edit of a large diff
    assert hash(verdict) == hash(classify("InferenceFleet", _edit("server.image")))


def test_no_kind_repeats_a_row_of_every_kind() -> None:
    # with unique patterns, two rows matching one path always differ in length
    common = {r.pattern for r in RULES if r.kind == "*"}
    assert [(r.kind, r.pattern) for r in RULES if r.kind != "*" and r.pattern in common] == []
