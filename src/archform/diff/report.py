"""Render a DiffReport as text, Markdown (a PR comment) or JSON."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from archform.diff.engine import (
    Change,
    CostDelta,
    DiffReport,
    LintItem,
    RegionDelta,
    ResourceDelta,
    Throughput,
    TrainingDelta,
)
from archform.diff.impact import Impact
from archform.diff.resources import Cost

_MAX_VALUE = 80


def value_text(value: Any) -> str:
    """A short, one-line rendering of a spec value."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, str):
        text = value
    elif isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        text = "[" + ", ".join(value_text(v) for v in value) + "]"
    elif isinstance(value, dict) and "name" in value:
        keys = ("kind", "purpose", "capacity_tib", "nodes", "instance_type", "address", "default")
        text = " ".join(f"{k}={value_text(value[k])}" for k in keys if value.get(k) is not None)
        text = text or value_text(value["name"])
    else:
        text = json.dumps(value, sort_keys=False, separators=(", ", ": "), ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."


def _path(change: Change) -> str:
    return change.path or "(document)"


def _counts(report: DiffReport) -> str:
    counts = Counter(c.impact for c in report.changes)
    return ", ".join(f"{counts[i]} {i.label}" for i in sorted(counts, reverse=True))


def summary(report: DiffReport) -> str:
    """One line: how many changes and the worst impact."""
    if not report.changes:
        return "no changes"
    highest = report.highest
    assert highest is not None
    n = len(report.changes)
    return f"{n} change{'s' if n != 1 else ''}, highest impact: {highest.label} ({_counts(report)})"


def _range(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}..{high}"


def _signed(value: int) -> str:
    return f"+{value}" if value > 0 else str(value)


def resource_line(delta: ResourceDelta) -> tuple[str, str, str]:
    """(what, nodes, gpus) of one resource delta, e.g. nodes ``32 -> 48 (+16)``."""
    ref = delta.new or delta.old
    assert ref is not None
    what = f"{ref.document} {ref.group} ({ref.region})"
    cells = []
    for attr in ("nodes", "gpus"):
        old = (
            (0, 0)
            if delta.old is None
            else (getattr(delta.old, f"{attr}_min"), getattr(delta.old, f"{attr}_max"))
        )
        new = (
            (0, 0)
            if delta.new is None
            else (getattr(delta.new, f"{attr}_min"), getattr(delta.new, f"{attr}_max"))
        )
        text = f"{_range(*old)} -> {_range(*new)}"
        if old[0] == old[1] and new[0] == new[1] and old != new:
            text += f" ({_signed(new[0] - old[0])})"
        cells.append(text)
    old_type = delta.old.instance_type if delta.old else None
    new_type = delta.new.instance_type if delta.new else None
    if old_type and new_type and old_type != new_type:
        what += f" {old_type} -> {new_type}"
    return what, cells[0], cells[1]


def region_line(delta: RegionDelta) -> tuple[str, str, str]:
    """(region, nodes, gpus) of one region's totals."""
    return (
        f"region {delta.region} (all documents)",
        f"{_range(*delta.nodes_old)} -> {_range(*delta.nodes_new)}",
        f"{_range(*delta.gpus_old)} -> {_range(*delta.gpus_new)}",
    )


def money(value: float | None) -> str:
    """``$12,345`` or ``no price``."""
    return "no price" if value is None else f"${value:,.0f}"


def cost_line(delta: CostDelta) -> tuple[str, str, str, str]:
    """(what, old, new, delta) of one cost delta."""
    what = delta.document + ("" if delta.label == "total" else f" at {delta.label} size")
    old = "-" if delta.old is None else _partial(delta.old)
    new = "-" if delta.new is None else _partial(delta.new)
    missing = [m for c in (delta.old, delta.new) if c is not None for m in c.missing]
    d = delta.delta
    if d is None:
        change = "no price for " + ", ".join(dict.fromkeys(missing))
    else:
        change = ("+" if d > 0 else "-" if d < 0 else "") + money(abs(d))
    return what, old, new, change


def _partial(cost: Cost) -> str:
    """A cost that lacks a price is a lower bound: ``>= $12,345``."""
    text = money(cost.usd_per_month)
    return f">= {text}" if cost.missing and cost.usd_per_month is not None else text


def _price_basis(report: DiffReport) -> str:
    table = report.prices
    checked = "" if table.verified else ", not re-verified"
    return (
        f"list prices as of {table.as_of.isoformat()}{checked}, each region at its own "
        f"price, {table.hours_per_month} h/month"
    )


def to_text(report: DiffReport) -> str:
    """Plain text for a terminal."""
    lines = [f"archform diff: {summary(report)}"]
    current: Impact | None = None
    for change in report.changes:
        if change.impact != current:
            current = change.impact
            lines += ["", f"{current.label.upper()}"]
        lines.append(
            f"  {change.document}  {_path(change)}: "
            f"{value_text(change.old)} -> {value_text(change.new)}"
        )
        lines.append(f"      {change.reason}")
    if report.resources:
        lines += ["", "Resources (nodes, GPUs):"]
        for delta in report.resources:
            what, nodes, gpus = resource_line(delta)
            lines.append(f"  {what}: nodes {nodes}, GPUs {gpus}")
        for region in report.regions:
            what, nodes, gpus = region_line(region)
            lines.append(f"  {what}: nodes {nodes}, GPUs {gpus}")
    if report.costs:
        lines += ["", f"Monthly cost ({_price_basis(report)}):"]
        for cost in report.costs:
            what, before, after, change_text = cost_line(cost)
            lines.append(f"  {what}: {before} -> {after} ({change_text})")
    if report.training:
        lines += ["", "Training throughput (archform's training model, list prices):"]
        for t in report.training:
            lines.extend(training_lines(t))
    for title, items in _lint_sections(report):
        lines += ["", f"{title}:"]
        for item in items:
            lines.append(
                f"  {item.rule} [{item.severity}] {item.document} {item.path}: {item.message}"
            )
    return "\n".join(lines) + "\n"


def _lint_sections(report: DiffReport) -> list[tuple[str, list[LintItem]]]:
    if report.lint_new is None or report.lint_fixed is None:
        return []
    return [
        (f"New lint findings ({len(report.lint_new)})", report.lint_new),
        (f"Fixed lint findings ({len(report.lint_fixed)})", report.lint_fixed),
    ]


def md_cell(text: str) -> str:
    """Text made inert in a Markdown table cell of a PR comment."""
    out = " ".join(text.split())
    for char, entity in (
        ("&", "&amp;"),
        ("<", "&lt;"),
        (">", "&gt;"),
        ("|", "&#124;"),
        ("`", "&#96;"),
        ("*", "&#42;"),
        ("_", "&#95;"),
        ("[", "&#91;"),
        ("]", "&#93;"),
        ("\\", "&#92;"),
        ("@", "&#64;"),
    ):
        out = out.replace(char, entity)
    return out


def _code(text: str) -> str:
    """An escaped cell shown as code (HTML tag: backticks could be closed by the value)."""
    return f"<code>{md_cell(text)}</code>"


def to_markdown(report: DiffReport) -> str:
    """A PR comment: summary line, change table, resource and cost deltas."""
    highest = report.highest
    head = "no changes" if highest is None else f"highest impact **{highest.label}**"
    lines = [f"### archform diff: {head}", ""]
    if report.changes:
        lines += [
            md_cell(summary(report)),
            "",
            "| impact | document | path | old | new | why |",
            "|---|---|---|---|---|---|",
        ]
        for c in report.changes:
            cells = [
                md_cell(c.impact.label),
                md_cell(c.document),
                _code(_path(c)),
                _code(value_text(c.old)),
                _code(value_text(c.new)),
                md_cell(c.reason),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    if report.resources:
        lines += [
            "",
            "**Resources**",
            "",
            "| node group (region) | nodes | GPUs |",
            "|---|---|---|",
        ]
        rows = [resource_line(d) for d in report.resources]
        rows += [region_line(r) for r in report.regions]
        for row in rows:
            lines.append("| " + " | ".join(md_cell(x) for x in row) + " |")
    if report.costs:
        lines += [
            "",
            f"**Monthly cost** ({md_cell(_price_basis(report))})",
            "",
            "| document | before | after | change |",
            "|---|---|---|---|",
        ]
        for delta in report.costs:
            lines.append("| " + " | ".join(md_cell(x) for x in cost_line(delta)) + " |")
    if report.training:
        lines += ["", "**Training throughput** (archform's training model, list prices)", ""]
        lines += [md_cell(line.strip()) for t in report.training for line in training_lines(t)]
    for title, items in _lint_sections(report):
        lines += ["", f"**{title}**", ""]
        if items:
            lines += ["| rule | severity | document | path | message |", "|---|---|---|---|---|"]
        for item in items:
            cells = [item.rule, item.severity, item.document, item.path, item.message]
            lines.append("| " + " | ".join(md_cell(x) for x in cells) + " |")
    return "\n".join(lines) + "\n"


def policy_text() -> str:
    """The update-policy table, one row per line, and the default for unlisted fields."""
    from archform.diff.policy import DEFAULT_IMPACT, DEFAULT_REASON, RULES

    lines = []
    for rule in RULES:
        note = " (refined by the values)" if rule.refine is not None else ""
        lines.append(
            f"{rule.kind:<16} {rule.pattern:<44} {rule.impact.label:<20} {rule.reason}{note}"
        )
    lines.append(f"{'*':<16} {'(any other field)':<44} {DEFAULT_IMPACT.label:<20} {DEFAULT_REASON}")
    return "\n".join(lines) + "\n"


def _pct(old: float, new: float) -> str:
    return "n/a" if old == 0 else f"{(new - old) / old * 100:+.1f}%"


def training_lines(t: TrainingDelta) -> list[str]:
    """Text lines of one training throughput delta."""
    o, n = t.old, t.new
    lines = [
        f"  {t.document}: {o.tokens_per_s:,.0f} -> {n.tokens_per_s:,.0f} tokens/s "
        f"({_pct(o.tokens_per_s, n.tokens_per_s)}); per GPU {o.tokens_per_s_per_gpu:,.0f} -> "
        f"{n.tokens_per_s_per_gpu:,.0f}; MFU {o.mfu:.1%} -> {n.mfu:.1%}"
        + ("; IMPOSSIBLE after the change (above the GPUs' peak)" if n.impossible else "")
    ]
    ou, nu = o.usd_per_million_tokens, n.usd_per_million_tokens
    if ou is not None and nu is not None:
        lines.append(f"      cost per million tokens ${ou:,.2f} -> ${nu:,.2f} ({_pct(ou, nu)})")
    if o.hours_for_budget is not None and n.hours_for_budget is not None:
        money = ""
        if o.usd_for_budget is not None and n.usd_for_budget is not None:
            money = (
                f", ${o.usd_for_budget:,.0f} -> ${n.usd_for_budget:,.0f} "
                f"({n.usd_for_budget - o.usd_for_budget:+,.0f})"
            )
        lines.append(
            f"      token budget {o.hours_for_budget:,.1f} h -> {n.hours_for_budget:,.1f} h{money}"
        )
    return lines


def _throughput_json(t: Throughput) -> dict[str, Any]:
    cost = t.usd_per_million_tokens
    return {
        "tokens_per_s": round(t.tokens_per_s, 0),
        "tokens_per_s_per_gpu": round(t.tokens_per_s_per_gpu, 1),
        "mfu": round(t.mfu, 4),
        "impossible": t.impossible,
        "usd_per_hour": t.usd_per_hour,
        "usd_per_million_tokens": None if cost is None else round(cost, 2),
        "hours_for_budget": None if t.hours_for_budget is None else round(t.hours_for_budget, 1),
        "usd_for_budget": t.usd_for_budget,
    }


def to_json(report: DiffReport) -> str:
    """Machine-readable report."""
    highest = report.highest
    data: dict[str, Any] = {
        "highest": None if highest is None else highest.slug,
        "changes": [
            {
                "document": c.document,
                "kind": c.kind,
                "path": c.path,
                "old": c.old,
                "new": c.new,
                "impact": c.impact.slug,
                "reason": c.reason,
                "policy": c.rule,
            }
            for c in report.changes
        ],
        "resources": [
            {
                "document": d.key[0],
                "group": d.key[1],
                "region": d.key[2],
                "old": None if d.old is None else _fp(d.old),
                "new": None if d.new is None else _fp(d.new),
            }
            for d in report.resources
        ],
        "regions": [
            {
                "region": r.region,
                "nodes_old": list(r.nodes_old),
                "nodes_new": list(r.nodes_new),
                "gpus_old": list(r.gpus_old),
                "gpus_new": list(r.gpus_new),
            }
            for r in report.regions
        ],
        "costs": {
            "prices_as_of": report.prices.as_of.isoformat(),
            "prices_verified": report.prices.verified,
            "hours_per_month": report.prices.hours_per_month,
            "documents": [
                {
                    "document": d.document,
                    "size": d.label,
                    "old_usd_per_month": None if d.old is None else d.old.usd_per_month,
                    "new_usd_per_month": None if d.new is None else d.new.usd_per_month,
                    "delta_usd_per_month": d.delta,
                    "missing_prices": sorted({m for c in (d.old, d.new) if c for m in c.missing}),
                }
                for d in report.costs
            ],
        },
    }
    if report.training:
        data["training"] = [
            {
                "document": t.document,
                "old": _throughput_json(t.old),
                "new": _throughput_json(t.new),
                "tokens_per_s_change": round(t.new.tokens_per_s / t.old.tokens_per_s - 1, 4)
                if t.old.tokens_per_s
                else None,
            }
            for t in report.training
        ]
    if report.lint_new is not None and report.lint_fixed is not None:
        data["lint"] = {
            "new": [_lint_json(i) for i in report.lint_new],
            "fixed": [_lint_json(i) for i in report.lint_fixed],
        }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _lint_json(item: LintItem) -> dict[str, str]:
    return {
        "rule": item.rule,
        "name": item.name,
        "severity": item.severity,
        "document": item.document,
        "path": item.path,
        "message": item.message,
    }


def _fp(fp: Any) -> dict[str, Any]:
    return {
        "instance_type": fp.instance_type,
        "gpu": fp.gpu_model,
        "nodes_min": fp.nodes_min,
        "nodes_max": fp.nodes_max,
        "gpus_min": fp.gpus_min,
        "gpus_max": fp.gpus_max,
    }
