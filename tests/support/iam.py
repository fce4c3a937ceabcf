"""A small evaluator of IAM policy documents: explicit Deny wins, then any Allow.

Enough to ask "may this identity do ACTION on RESOURCE" of the generated policies
(Action/Resource with '*' and '?' wildcards; Condition blocks are reported, not evaluated).
"""

from __future__ import annotations

import fnmatch
import json
from typing import Any


def _list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def statements(policy: str | dict[str, Any]) -> list[dict[str, Any]]:
    doc = json.loads(policy) if isinstance(policy, str) else policy
    assert doc["Version"] == "2012-10-17"
    return _list_of_dicts(doc["Statement"])


def _list_of_dicts(value: Any) -> list[dict[str, Any]]:
    return [value] if isinstance(value, dict) else list(value)


def _matches(patterns: list[str], value: str) -> bool:
    return any(fnmatch.fnmatchcase(value, p) for p in patterns)


def decision(policy: str | dict[str, Any], action: str, resource: str) -> str:
    """'deny', 'allow' or 'implicit-deny'."""
    result = "implicit-deny"
    for st in statements(policy):
        if not _matches(_list(st["Action"]), action):
            continue
        if not _matches(_list(st["Resource"]), resource):
            continue
        if st["Effect"] == "Deny":
            return "deny"
        result = "allow"
    return result


def allows(policy: str | dict[str, Any], action: str, resource: str) -> bool:
    return decision(policy, action, resource) == "allow"
