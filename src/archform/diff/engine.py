"""Compare two blueprint sets: classified changes, resource deltas and cost deltas."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from archform.diff.changes import compare
from archform.diff.impact import Impact
from archform.diff.policy import classify
from archform.diff.resources import Cost, Footprint, costs, footprints
from archform.estimate import training_plan
from archform.estimate.prices import PriceTable, load_prices
from archform.spec.document import BlueprintSet, Model
from archform.spec.models.training import TrainingCluster


@dataclass(frozen=True, slots=True)
class LintItem:
    """A lint finding as the diff report shows it (plain data; computed by the caller)."""

    rule: str
    name: str
    severity: str
    document: str
    path: str
    message: str


@dataclass(frozen=True, slots=True)
class Change:
    """One classified change of one document."""

    document: str
    kind: str
    path: str
    old: Any
    new: Any
    impact: Impact
    reason: str
    rule: str | None


@dataclass(frozen=True, slots=True)
class ResourceDelta:
    """A node group or pool before and after (None: absent on that side)."""

    old: Footprint | None
    new: Footprint | None

    @property
    def key(self) -> tuple[str, str, str]:
        """(document, group, region)."""
        return (self.old or self.new).key  # type: ignore[union-attr]


@dataclass(frozen=True, slots=True)
class RegionDelta:
    """Nodes and GPUs of every document in one region, before and after (min, max)."""

    region: str
    nodes_old: tuple[int, int]
    nodes_new: tuple[int, int]
    gpus_old: tuple[int, int]
    gpus_new: tuple[int, int]


@dataclass(frozen=True, slots=True)
class CostDelta:
    """Monthly cost of a document before and after (None: absent on that side)."""

    document: str
    label: str
    old: Cost | None
    new: Cost | None

    @property
    def delta(self) -> float | None:
        """New minus old in USD per month; None when either side lacks a price."""
        if any(c is not None and c.missing for c in (self.old, self.new)):
            return None
        old = 0.0 if self.old is None else self.old.usd_per_month
        new = 0.0 if self.new is None else self.new.usd_per_month
        if old is None or new is None:
            return None
        return new - old


@dataclass(frozen=True, slots=True)
class Throughput:
    """What a training cluster delivers for its declared workload (the training model)."""

    tokens_per_s: float
    tokens_per_s_per_gpu: float
    mfu: float
    impossible: bool
    usd_per_hour: float | None
    hours_for_budget: float | None
    usd_for_budget: float | None

    @property
    def usd_per_million_tokens(self) -> float | None:
        """List-price cost of a million training tokens."""
        if self.usd_per_hour is None or self.tokens_per_s <= 0:
            return None
        return self.usd_per_hour / (self.tokens_per_s * 3600) * 1e6


@dataclass(frozen=True, slots=True)
class TrainingDelta:
    """A changed TrainingCluster's estimated throughput and cost, before and after."""

    document: str
    old: Throughput
    new: Throughput


@dataclass(frozen=True)
class DiffReport:
    """Everything `archform diff` reports."""

    changes: list[Change]
    resources: list[ResourceDelta]
    costs: list[CostDelta]
    prices: PriceTable
    regions: list[RegionDelta] = field(default_factory=list)
    documents_old: list[str] = field(default_factory=list)
    documents_new: list[str] = field(default_factory=list)
    lint_new: list[LintItem] | None = None
    lint_fixed: list[LintItem] | None = None
    training: list[TrainingDelta] = field(default_factory=list)

    @property
    def highest(self) -> Impact | None:
        """The worst impact, or None when nothing changes."""
        return max((c.impact for c in self.changes), default=None)

    def at_or_above(self, threshold: Impact) -> list[Change]:
        """Changes whose impact is at least `threshold`."""
        return [c for c in self.changes if c.impact >= threshold]


def diff_sets(old: BlueprintSet, new: BlueprintSet, table: PriceTable | None = None) -> DiffReport:
    """Compare documents matched by name; highest impact first, then document and path order."""
    table = table or load_prices()
    old_docs = {d.name: d.model for d in old.documents}
    new_docs = {d.name: d.model for d in new.documents}
    names = list(old_docs) + [n for n in new_docs if n not in old_docs]
    changes: list[Change] = []
    for name in names:
        changes.extend(_document_changes(name, old_docs.get(name), new_docs.get(name)))
    order = {name: i for i, name in enumerate(names)}
    ranked = sorted(
        enumerate(changes), key=lambda ic: (-ic[1].impact, order[ic[1].document], ic[0])
    )
    return DiffReport(
        changes=[c for _, c in ranked],
        resources=_resource_deltas(names, old_docs, new_docs),
        costs=_cost_deltas(names, old_docs, new_docs, table, {c.document for c in changes}),
        prices=table,
        regions=_region_deltas(old_docs, new_docs),
        documents_old=list(old_docs),
        documents_new=list(new_docs),
        training=_training_deltas(names, old_docs, new_docs, table, {c.document for c in changes}),
    )


def throughput(model: Model, table: PriceTable) -> Throughput | None:
    """The training model's figures for a TrainingCluster, None when it has no estimate."""
    if not isinstance(model, TrainingCluster) or training_plan.why_not(model) is not None:
        return None
    e = training_plan.estimate(model, table)
    return Throughput(
        tokens_per_s=e.tokens_per_s,
        tokens_per_s_per_gpu=e.step.tokens_per_s_per_gpu,
        mfu=e.step.mfu,
        impossible=e.step.impossible,
        usd_per_hour=e.usd_per_hour,
        hours_for_budget=e.hours_for_budget,
        usd_for_budget=e.usd_for_budget,
    )


def _training_deltas(
    names: list[str],
    old: dict[str, Model],
    new: dict[str, Model],
    table: PriceTable,
    changed: set[str],
) -> list[TrainingDelta]:
    out = []
    for name in names:
        if name not in changed or name not in old or name not in new:
            continue
        before, after = throughput(old[name], table), throughput(new[name], table)
        if before is not None and after is not None and before != after:
            out.append(TrainingDelta(name, before, after))
    return out


def _dump(model: Model) -> dict[str, Any]:
    return model.model_dump(mode="json")


def _document_changes(name: str, old: Model | None, new: Model | None) -> list[Change]:
    if old is not None and new is not None and old.kind == new.kind:
        out = []
        for edit in compare(_dump(old), _dump(new)):
            verdict = classify(new.kind, edit)
            out.append(
                Change(
                    name,
                    new.kind,
                    edit.path,
                    edit.old,
                    edit.new,
                    verdict.impact,
                    verdict.reason,
                    verdict.rule,
                )
            )
        return out
    out = []
    if old is not None:
        out.extend(_removed(old))
    if new is not None:
        out.append(
            Change(
                name,
                new.kind,
                "",
                None,
                new.kind,
                Impact.IN_PLACE,
                f"new {new.kind} is created; nothing existing changes",
                None,
            )
        )
    return out


def _removed(model: Model) -> list[Change]:
    kind = model.kind
    if isinstance(model, TrainingCluster):
        stores = len(model.storage)
        reason = (
            f"the cluster is destroyed with its {stores} file system(s)"
            if stores
            else "the cluster is destroyed"
        )
        out = [Change(model.name, kind, "", kind, None, Impact.CLUSTER_WIDE_OUTAGE, reason, None)]
        for store in model.storage:
            out.append(
                Change(
                    model.name,
                    kind,
                    f"storage[{store.name}]",
                    store.model_dump(mode="json"),
                    None,
                    Impact.DATA_LOSS_RISK,
                    "the file system is destroyed together with its data",
                    None,
                )
            )
        return out
    if kind == "InferenceFleet":
        return [
            Change(
                model.name,
                kind,
                "",
                kind,
                None,
                Impact.CLUSTER_WIDE_OUTAGE,
                "the fleet is destroyed in every region: its traffic has nowhere to go",
                None,
            )
        ]
    return [
        Change(
            model.name,
            kind,
            "",
            kind,
            None,
            Impact.DATA_LOSS_RISK,
            "the registry bucket and promotion pipeline are destroyed",
            None,
        )
    ]


def _resource_deltas(
    names: list[str], old: dict[str, Model], new: dict[str, Model]
) -> list[ResourceDelta]:
    out: list[ResourceDelta] = []
    for name in names:
        before = {f.key: f for f in (footprints(old[name]) if name in old else [])}
        after = {f.key: f for f in (footprints(new[name]) if name in new else [])}
        for key in list(before) + [k for k in after if k not in before]:
            a, b = before.get(key), after.get(key)
            if a != b:
                out.append(ResourceDelta(a, b))
    return out


def _cost_deltas(
    names: list[str],
    old: dict[str, Model],
    new: dict[str, Model],
    table: PriceTable,
    changed: set[str],
) -> list[CostDelta]:
    """Costs that differ, and unpriced costs of changed documents (to say "no price")."""
    out: list[CostDelta] = []
    for name in names:
        before = {c.label: c for c in (costs(old[name], table) if name in old else [])}
        after = {c.label: c for c in (costs(new[name], table) if name in new else [])}
        for label in list(before) + [k for k in after if k not in before]:
            a, b = before.get(label), after.get(label)
            unpriced = any(c is not None and c.missing for c in (a, b))
            if a != b or (unpriced and name in changed):
                out.append(CostDelta(name, label, a, b))
    return out


def _region_deltas(old: dict[str, Model], new: dict[str, Model]) -> list[RegionDelta]:
    sums: dict[str, list[int]] = {}
    for side, docs in ((0, old), (1, new)):
        for model in docs.values():
            for fp in footprints(model):
                row = sums.setdefault(fp.region, [0] * 8)
                row[side * 4 : side * 4 + 4] = [
                    a + b
                    for a, b in zip(
                        row[side * 4 : side * 4 + 4],
                        (fp.nodes_min, fp.nodes_max, fp.gpus_min, fp.gpus_max),
                        strict=True,
                    )
                ]
    return [
        RegionDelta(region, (v[0], v[1]), (v[4], v[5]), (v[2], v[3]), (v[6], v[7]))
        for region, v in sums.items()
        if v[:4] != v[4:]
    ]
