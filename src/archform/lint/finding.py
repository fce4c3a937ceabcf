"""What rules yield (Hit) and what the engine reports (Finding), with stable fingerprints."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from archform.spec.document import Document
from archform.spec.paths import Loc, format_path

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
RANK: dict[str, int] = {"info": 0, "warning": 1, "error": 2}

_MISSING: Any = object()


@dataclass(frozen=True, slots=True)
class Hit:
    """One problem a rule found: where (document + spec location), what, and how to fix it.

    `at` is where to point when `loc` itself is not written in the file (a default or a
    missing key); `severity` overrides the rule's default for this hit; `value` is the
    value fingerprinted (default: the value at `loc`).
    """

    doc: Document
    loc: Loc
    message: str
    hint: str
    severity: Severity | None = None
    at: Loc | None = None
    value: Any = _MISSING


@dataclass(frozen=True, slots=True)
class Finding:
    """A reported problem, located in a file, fingerprinted independently of lines."""

    rule: str
    name: str
    severity: Severity
    file: str
    line: int
    column: int
    end_column: int
    path: str
    document: str
    message: str
    hint: str
    fingerprint: str
    suppressed: bool = False
    justification: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The JSON shape of one finding (format version 1)."""
        out: dict[str, Any] = {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "document": self.document,
            "message": self.message,
            "hint": self.hint,
            "fingerprint": self.fingerprint,
            "suppressed": self.suppressed,
        }
        if self.justification is not None:
            out["justification"] = self.justification
        return out

    @property
    def sort_key(self) -> tuple[str, int, int, str, str]:
        """Order: file, line, column, rule, path."""
        return (self.file, self.line, self.column, self.rule, self.path)


def value_at(data: Any, loc: Loc) -> Any:
    """The value at `loc` in plain data, or None when absent."""
    node = data
    for part in loc:
        if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
            continue
        if not (isinstance(node, dict) and isinstance(part, str) and part in node):
            return None
        node = node[part]
    return node


def fingerprint(rule: str, document: str, path: str, value: Any) -> str:
    """Hash of (rule, document name, spec path, normalised value): survives line moves."""
    normal = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256("\x1f".join((rule, document, path, normal)).encode("utf-8"))
    return digest.hexdigest()[:32]


def token_end(line_text: str, column: int) -> int:
    """Exclusive end column of the key or scalar token starting at `column` (1-based)."""
    index = column - 1
    end = index
    quote = line_text[index] if 0 <= index < len(line_text) else ""
    if quote in ("'", '"'):
        close = line_text.find(quote, index + 1)
        end = close + 1 if close > index else len(line_text)
    else:
        stops = ":,]}#\t\n"
        while end < len(line_text) and line_text[end] not in stops:
            if line_text.startswith(" #", end):
                break
            end += 1
        while end > index and line_text[end - 1] == " ":
            end -= 1
    return max(end, index + 1) + 1


def make_finding(code: str, name: str, default: Severity, hit: Hit, lines: list[str]) -> Finding:
    """Turn a rule's Hit into a located, fingerprinted Finding."""
    doc = hit.doc
    written = hit.loc in doc.source.keys
    anchor = hit.loc if written or hit.at is None else hit.at
    pos = doc.locate(anchor, prefer="key")
    path = format_path(hit.loc)
    value = value_at(doc.raw, hit.loc) if hit.value is _MISSING else hit.value
    line_text = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
    return Finding(
        rule=code,
        name=name,
        severity=hit.severity or default,
        file=doc.file,
        line=pos.line,
        column=pos.column,
        end_column=token_end(line_text, pos.column),
        path=path,
        document=doc.name,
        message=hit.message,
        hint=hit.hint,
        fingerprint=fingerprint(code, doc.name, path, value),
    )
