"""JSON output, format version 1 (stable keys; new keys may be added)."""

from __future__ import annotations

import json
from typing import Any

from archform import __version__
from archform.lint.report import LintReport


def as_dict(report: LintReport) -> dict[str, Any]:
    """The JSON document as a dict."""
    counts = report.result.counts()
    out: dict[str, Any] = {
        "version": 1,
        "tool": {"name": "archform", "version": __version__},
        "findings": [f.to_json() for f in report.result.findings],
        "summary": {
            "error": counts["error"],
            "warning": counts["warning"],
            "info": counts["info"],
            "suppressed": counts["suppressed"],
        },
    }
    if report.diff_base is not None:
        out["diff_base"] = report.diff_base
        out["fixed"] = [f.to_json() for f in report.fixed]
    return out


def render_json(report: LintReport) -> str:
    """Indented, key-order-stable JSON."""
    return json.dumps(as_dict(report), indent=2) + "\n"
