"""An evaluator of identity and resource policy documents, following AWS's documented logic.

Neither moto (its access_control treats an unmet Condition as an explicit Deny, matches
action names case-sensitively, knows neither NotResource nor the `?` wildcard) nor a
maintained PyPI library evaluates policies as IAM does, so this one implements the parts of
the documented evaluation that the generated policies use, and refuses the rest loudly:

- explicit Deny wins, then any Allow, else implicit deny
  (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html);
- Action / NotAction, Resource / NotResource, with `*` and `?` wildcards; action names are
  case-insensitive, resource ARNs case-sensitive
  (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_action.html);
- Condition: every operator block must hold (AND), every key in a block (AND), any value of a
  key (OR); condition key names are case-insensitive; a key missing from the request context
  makes the condition false, except for negated operators (true) and Null
  (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html).
  An operator not listed in OPERATORS raises, so a policy is never judged by a guess.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Mapping
from typing import Any


def _list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def statements(policy: str | dict[str, Any]) -> list[dict[str, Any]]:
    doc = json.loads(policy) if isinstance(policy, str) else policy
    assert doc["Version"] == "2012-10-17"
    return _list_of_dicts(doc["Statement"])


def _list_of_dicts(value: Any) -> list[dict[str, Any]]:
    return [value] if isinstance(value, dict) else list(value)


def _wildcard(pattern: str, value: str, *, fold: bool = False) -> bool:
    # IAM's wildcards are only * and ?; [ ] are literal (fnmatch would treat them as a class)
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, re.IGNORECASE | re.DOTALL if fold else re.DOTALL) is not None


def _strings(test: Callable[[str, str], bool]) -> Callable[[list[str], list[str]], bool]:
    return lambda wanted, actual: any(test(w, a) for w in wanted for a in actual)


def _numeric(test: Callable[[float, float], bool]) -> Callable[[list[str], list[str]], bool]:
    return lambda wanted, actual: any(test(float(a), float(w)) for w in wanted for a in actual)


def _ip(wanted: list[str], actual: list[str]) -> bool:
    return any(
        ipaddress.ip_address(a) in ipaddress.ip_network(w, strict=False)
        for w in wanted
        for a in actual
    )


def _bool(wanted: list[str], actual: list[str]) -> bool:
    return any(str(w).lower() == str(a).lower() for w in wanted for a in actual)


# operator -> (test on present values, negated)
OPERATORS: dict[str, tuple[Callable[[list[str], list[str]], bool], bool]] = {
    "StringEquals": (_strings(lambda w, a: w == a), False),
    "StringNotEquals": (_strings(lambda w, a: w == a), True),
    "StringEqualsIgnoreCase": (_strings(lambda w, a: w.lower() == a.lower()), False),
    "StringNotEqualsIgnoreCase": (_strings(lambda w, a: w.lower() == a.lower()), True),
    "StringLike": (_strings(lambda w, a: _wildcard(w, a)), False),
    "StringNotLike": (_strings(lambda w, a: _wildcard(w, a)), True),
    "ArnEquals": (_strings(lambda w, a: _wildcard(w, a)), False),
    "ArnLike": (_strings(lambda w, a: _wildcard(w, a)), False),
    "ArnNotEquals": (_strings(lambda w, a: _wildcard(w, a)), True),
    "ArnNotLike": (_strings(lambda w, a: _wildcard(w, a)), True),
    "NumericEquals": (_numeric(lambda a, w: a == w), False),
    "NumericNotEquals": (_numeric(lambda a, w: a == w), True),
    "NumericLessThan": (_numeric(lambda a, w: a < w), False),
    "NumericLessThanEquals": (_numeric(lambda a, w: a <= w), False),
    "NumericGreaterThan": (_numeric(lambda a, w: a > w), False),
    "NumericGreaterThanEquals": (_numeric(lambda a, w: a >= w), False),
    "Bool": (_bool, False),
    "IpAddress": (_ip, False),
    "NotIpAddress": (_ip, True),
}


def _condition_holds(condition: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    folded = {
        k.lower(): _list(v) if not isinstance(v, bool) else [str(v)] for k, v in context.items()
    }
    for operator, block in condition.items():
        if_exists = operator.endswith("IfExists")
        name = operator.removesuffix("IfExists")
        for key, raw in block.items():
            wanted = [str(v) for v in _list(raw)] if not isinstance(raw, bool) else [str(raw)]
            actual = folded.get(key.lower())
            if name == "Null":
                absent = actual is None
                if not any((w.lower() == "true") == absent for w in wanted):
                    return False
                continue
            if name not in OPERATORS:
                raise NotImplementedError(f"condition operator {operator} is not evaluated here")
            test, negated = OPERATORS[name]
            if actual is None:
                if if_exists or negated:
                    continue
                return False
            hit = test(wanted, [str(a) for a in actual])
            if hit == negated:
                return False
    return True


def _applies(st: dict[str, Any], action: str, resource: str, context: Mapping[str, Any]) -> bool:
    if "NotAction" in st:
        action_hit = not any(_wildcard(p, action, fold=True) for p in _list(st["NotAction"]))
    else:
        action_hit = any(_wildcard(p, action, fold=True) for p in _list(st["Action"]))
    if not action_hit:
        return False
    if "NotResource" in st:
        resource_hit = not any(_wildcard(p, resource) for p in _list(st["NotResource"]))
    else:
        resource_hit = any(_wildcard(p, resource) for p in _list(st.get("Resource", "*")))
    if not resource_hit:
        return False
    return _condition_holds(st.get("Condition", {}), context)


def decision(
    policy: str | dict[str, Any],
    action: str,
    resource: str,
    context: Mapping[str, Any] | None = None,
) -> str:
    """'deny', 'allow' or 'implicit-deny' for a request with `context` (condition keys)."""
    result = "implicit-deny"
    for st in statements(policy):
        if not _applies(st, action, resource, context or {}):
            continue
        if st["Effect"] == "Deny":
            return "deny"
        result = "allow"
    return result


def allows(
    policy: str | dict[str, Any],
    action: str,
    resource: str,
    context: Mapping[str, Any] | None = None,
) -> bool:
    return decision(policy, action, resource, context) == "allow"


__all__ = ["OPERATORS", "allows", "decision", "statements"]
