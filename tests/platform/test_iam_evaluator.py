"""The policy evaluator the generated-policy tests use (tests/support/iam.py), against the
behaviour AWS documents for each element (URLs in that module's docstring)."""

from __future__ import annotations

from typing import Any

import pytest

from support.iam import decision


def _policy(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


ALLOW_GET = {"Effect": "Allow", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/*"}


def test_action_names_are_case_insensitive_resources_are_not() -> None:
    policy = _policy(ALLOW_GET)
    assert decision(policy, "S3:getobject", "arn:aws:s3:::b/k") == "allow"
    assert decision(policy, "s3:GetObject", "arn:aws:s3:::B/k") == "implicit-deny"


def test_not_action_and_not_resource() -> None:
    deny_all_but_get = {"Effect": "Deny", "NotAction": "s3:Get*", "Resource": "*"}
    allow = {"Effect": "Allow", "Action": "s3:*", "NotResource": "arn:aws:s3:::secret/*"}
    policy = _policy(deny_all_but_get, allow)
    assert decision(policy, "s3:PutObject", "arn:aws:s3:::b/k") == "deny"
    assert decision(policy, "s3:GetObject", "arn:aws:s3:::b/k") == "allow"
    assert decision(policy, "s3:GetObject", "arn:aws:s3:::secret/k") == "implicit-deny"


def test_question_mark_wildcard_and_literal_brackets() -> None:
    policy = _policy(
        {"Effect": "Allow", "Action": "s3:GetObjec?", "Resource": "arn:aws:s3:::b/[a]"}
    )
    assert decision(policy, "s3:GetObject", "arn:aws:s3:::b/[a]") == "allow"
    assert decision(policy, "s3:GetObject", "arn:aws:s3:::b/a") == "implicit-deny"


def test_an_unmet_condition_means_the_statement_does_not_apply() -> None:
    """Not an explicit Deny (moto's access_control returns DENIED here)."""
    conditional = {**ALLOW_GET, "Condition": {"StringEquals": {"aws:PrincipalTag/team": "ml"}}}
    policy = _policy(conditional, ALLOW_GET | {"Resource": "arn:aws:s3:::b/public/*"})
    assert decision(policy, "s3:GetObject", "arn:aws:s3:::b/public/x", {}) == "allow"
    assert (
        decision(policy, "s3:GetObject", "arn:aws:s3:::b/k", {"aws:principaltag/team": "ml"})
        == "allow"
    )
    assert decision(policy, "s3:GetObject", "arn:aws:s3:::b/k", {"aws:PrincipalTag/team": "x"}) == (
        "implicit-deny"
    )


def test_missing_keys_negated_operators_null_and_if_exists() -> None:
    def one(condition: dict[str, Any], context: dict[str, Any]) -> str:
        return decision(
            _policy({**ALLOW_GET, "Condition": condition}),
            "s3:GetObject",
            "arn:aws:s3:::b/k",
            context,
        )

    assert one({"StringLike": {"aws:userid": "A*"}}, {}) == "implicit-deny"
    assert one({"StringNotLike": {"aws:userid": "A*"}}, {}) == "allow"
    assert one({"StringEqualsIfExists": {"aws:userid": "A"}}, {}) == "allow"
    assert one({"Null": {"s3:if-match": "true"}}, {}) == "allow"
    assert one({"Null": {"s3:if-match": "true"}}, {"s3:if-match": "e"}) == "implicit-deny"
    assert one({"Bool": {"aws:SecureTransport": "false"}}, {"aws:SecureTransport": True}) == (
        "implicit-deny"
    )
    assert (
        one({"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}, {"aws:SourceIp": "10.1.2.3"}) == "allow"
    )
    # every key of a block and every block must hold (AND); any value of one key (OR)
    both = {"StringEquals": {"a": ["x", "y"], "b": "z"}}
    assert one(both, {"a": "y", "b": "z"}) == "allow"
    assert one(both, {"a": "y", "b": "w"}) == "implicit-deny"


def test_an_operator_it_does_not_know_is_refused() -> None:
    policy = _policy({**ALLOW_GET, "Condition": {"ForAnyValue:StringLike": {"k": "v"}}})
    with pytest.raises(NotImplementedError):
        decision(policy, "s3:GetObject", "arn:aws:s3:::b/k", {"k": "v"})
