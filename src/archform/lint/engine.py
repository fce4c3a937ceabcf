"""Run rules over a blueprint set, apply governed suppressions, return sorted findings."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import BaseModel

from archform.lint.context import RuleContext, SuppressionState
from archform.lint.finding import Finding, make_finding
from archform.lint.rule import Registry, Rule, load_rules
from archform.spec.document import BlueprintSet
from archform.spec.errors import UsageError

UNSUPPRESSIBLE_AREA = "LNT"


@dataclass(frozen=True)
class LintResult:
    """Findings (suppressed ones included, marked) and what ran."""

    findings: tuple[Finding, ...]
    rules: tuple[Rule, ...]
    documents: int

    def active(self) -> list[Finding]:
        """Findings that are not suppressed."""
        return [f for f in self.findings if not f.suppressed]

    def counts(self) -> dict[str, int]:
        """Unsuppressed findings per severity, plus the suppressed count."""
        out = {"error": 0, "warning": 0, "info": 0}
        for f in self.active():
            out[f.severity] += 1
        out["suppressed"] = sum(1 for f in self.findings if f.suppressed)
        return out


def today_from_env() -> dt.date:
    """Today's date, or ARCHFORM_TODAY (YYYY-MM-DD) for reproducible runs and tests."""
    value = os.environ.get("ARCHFORM_TODAY")
    if not value:
        return dt.date.today()
    return parse_today(value, "ARCHFORM_TODAY")


def parse_today(value: str, where: str) -> dt.date:
    """A YYYY-MM-DD date given on the command line or in the environment."""
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UsageError(f"{where}={value!r} is not a date", "use the form 2026-11-30") from None


def lint(
    blueprints: BlueprintSet,
    *,
    rules: Iterable[Rule] | None = None,
    options: dict[str, BaseModel] | None = None,
    today: dt.date | None = None,
    registry: Registry | None = None,
) -> LintResult:
    """Lint a loaded blueprint set with the given rules (default: all)."""
    registry = registry or load_rules()
    selected = list(rules) if rules is not None else list(registry)
    chosen = {r.code for r in selected}
    options = options or {}
    ctx = RuleContext(blueprints, today or today_from_env())
    # A suppression's rule runs even when not selected, so LNT002 judges the blueprint,
    # not the command line; its findings are then not reported.
    wanted = {s.rule for d in blueprints.documents for s in d.model.lint.ignore}
    extra = [registry.get(c) for c in sorted(wanted - chosen)] if "LNT002" in chosen else []
    runnable = [r for r in (*selected, *(r for r in extra if r)) if r.phase == "model"]
    produced: list[Finding] = []
    for rule in sorted(runnable, key=lambda r: r.code):
        produced.extend(_run(rule, ctx, options))
    produced, ctx.suppressions = _suppress(blueprints, produced, ctx.today, registry, runnable)
    findings = [f for f in produced if f.rule in chosen]
    for rule in selected:
        if rule.phase == "suppressions":
            findings.extend(_run(rule, ctx, options))
    findings.sort(key=lambda f: f.sort_key)
    return LintResult(
        tuple(findings), tuple(sorted(selected, key=lambda r: r.code)), len(blueprints.documents)
    )


def _run(rule: Rule, ctx: RuleContext, options: dict[str, BaseModel]) -> list[Finding]:
    # The defaults, without building the options validator (start-up); every option has a
    # default (tests/lint/test_startup.py proves model_construct() equals validation).
    opts = options.get(rule.code) or rule.options.model_construct()
    out = []
    for hit in rule.check(ctx, opts):
        lines = ctx.blueprints.lines(hit.doc.file)
        out.append(make_finding(rule.code, rule.name, rule.severity, hit, lines))
    return out


def _suppress(
    blueprints: BlueprintSet,
    findings: list[Finding],
    today: dt.date,
    registry: Registry,
    ran: list[Rule],
) -> tuple[list[Finding], list[SuppressionState]]:
    ran_codes = {r.code for r in ran}
    states: list[SuppressionState] = []
    out = list(findings)
    for doc in blueprints.documents:
        for index, entry in enumerate(doc.model.lint.ignore):
            expired = entry.expires is not None and entry.expires < today
            used = 0
            if not expired and not entry.rule.startswith(UNSUPPRESSIBLE_AREA):
                for i, f in enumerate(out):
                    if f.document == doc.name and f.rule == entry.rule:
                        if not f.suppressed:
                            out[i] = dataclasses.replace(
                                f, suppressed=True, justification=_justification(entry)
                            )
                        used += 1
            known = registry.get(entry.rule) is not None
            states.append(
                SuppressionState(
                    doc,
                    index,
                    entry,
                    expired,
                    used,
                    judged=(
                        entry.rule in ran_codes
                        or not known
                        or entry.rule.startswith(UNSUPPRESSIBLE_AREA)
                    ),
                    known=known,
                )
            )
    return out, states


def _justification(entry: object) -> str:
    reason = getattr(entry, "reason", "")
    owner = getattr(entry, "owner", None)
    expires = getattr(entry, "expires", None)
    parts = [str(reason)]
    if owner:
        parts.append(f"owner: {owner}")
    if expires:
        parts.append(f"expires: {expires}")
    return "; ".join(parts)
