"""SARIF 2.1.0 for GitHub code scanning.

Rules carry id, name, short/full description, markdown help, helpUri and the default
level; results carry a region (key of the spec path), a logical location (document +
spec path), `partialFingerprints` that do not depend on line numbers, and `suppressions`
with the justification from `lint.ignore`. In --diff-base mode results carry
`baselineState: new`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from archform import __version__
from archform.lint.finding import Finding
from archform.lint.report import LintReport
from archform.lint.rule import Rule

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://pypi.org/project/archform/"
LEVEL = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT_KEY = "archform/v1"


def help_uri(rule: Rule) -> str:
    """Where a rule's documentation is published (rules.md anchor)."""
    return f"{INFORMATION_URI}#{rule.code.lower()}-{rule.name}"


def _rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.section("What it does") or rule.summary},
        "help": {"text": rule.doc.strip(), "markdown": rule.doc.strip()},
        "helpUri": help_uri(rule),
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"tags": [rule.area.lower(), "architecture"], "since": rule.since},
    }


def _uri(file: str) -> str:
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return path.as_uri()
    return path.as_posix()


def _result(f: Finding, index: int, diff: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": LEVEL[f.severity],
        "message": {"text": f"{f.message} (hint: {f.hint})" if f.hint else f.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(f.file)},
                    "region": {
                        "startLine": f.line,
                        "startColumn": f.column,
                        "endLine": f.line,
                        "endColumn": f.end_column,
                    },
                },
                "logicalLocations": [
                    {
                        "name": f.path,
                        "fullyQualifiedName": f"{f.document}.{f.path}",
                        "kind": "member",
                    }
                ],
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
    }
    if f.suppressed:
        out["suppressions"] = [{"kind": "inSource", "justification": f.justification or ""}]
    if diff:
        out["baselineState"] = "new"
    return out


def as_dict(report: LintReport) -> dict[str, Any]:
    """The SARIF log as a dict."""
    rules = list(report.result.rules)
    index = {r.code: i for i, r in enumerate(rules)}
    diff = report.diff_base is not None
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "archform",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule(r) for r in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(f, index[f.rule], diff) for f in report.result.findings],
            }
        ],
    }


def render_sarif(report: LintReport) -> str:
    """SARIF JSON text."""
    return json.dumps(as_dict(report), indent=2) + "\n"
