"""JSON schemas for the custom resources the fleet generates (kubernetes-validate has none).

Written from each project's documented fields, strict (unknown keys rejected), so a CRD
object gets the same treatment as a core one:
- KEDA ScaledObject keda.sh/v1alpha1: https://keda.sh/docs/2.16/reference/scaledobject-spec/
- Gateway API v1 Gateway/HTTPRoute (standard channel): https://gateway-api.sigs.k8s.io/reference/spec/
- a provider's own kinds: its package's verify part (archform/providers/<name>/verify.py)
Only the documented fields are listed; a field outside them fails, as in --strict.
"""

from __future__ import annotations

from typing import Any

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
_DNS = {
    "type": "string",
    "maxLength": 253,
    "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
}
_MAP = {"type": "object", "additionalProperties": {"type": "string"}}


def obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A strict object schema: these properties only, `required` among them."""
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


_META = obj({"name": _DNS, "namespace": _DNS, "labels": _MAP, "annotations": _MAP}, ("name",))


def resource(api_version: str, kind: str, spec: dict[str, Any] | None) -> dict[str, Any]:
    """The schema of one custom resource: apiVersion, kind, metadata and `spec`."""
    props: dict[str, Any] = {
        "apiVersion": {"const": api_version},
        "kind": {"const": kind},
        "metadata": _META,
    }
    required = ["apiVersion", "kind", "metadata"]
    if spec is not None:
        props["spec"] = spec
        required.append("spec")
    return {
        "type": "object",
        "properties": props,
        "required": required,
        "additionalProperties": False,
    }


_POLICY = obj(
    {"type": {"enum": ["Pods", "Percent"]}, "value": INT, "periodSeconds": INT},
    ("type", "value", "periodSeconds"),
)
_RULES = obj(
    {
        "stabilizationWindowSeconds": INT,
        "selectPolicy": {"enum": ["Max", "Min", "Disabled"]},
        "policies": {"type": "array", "items": _POLICY},
    }
)
_BEHAVIOR = obj({"scaleUp": _RULES, "scaleDown": _RULES})

SCALED_OBJECT = resource(
    "keda.sh/v1alpha1",
    "ScaledObject",
    obj(
        {
            "scaleTargetRef": obj(
                {"apiVersion": STR, "kind": STR, "name": STR, "envSourceContainerName": STR},
                ("name",),
            ),
            "pollingInterval": INT,
            "cooldownPeriod": INT,
            "initialCooldownPeriod": INT,
            "idleReplicaCount": INT,
            "minReplicaCount": {"type": "integer", "minimum": 0},
            "maxReplicaCount": {"type": "integer", "minimum": 1},
            "fallback": obj(
                {
                    "failureThreshold": {"type": "integer", "minimum": 1},
                    "replicas": {"type": "integer", "minimum": 0},
                    "behavior": {
                        "enum": [
                            "static",
                            "currentReplicas",
                            "currentReplicasIfHigher",
                            "currentReplicasIfLower",
                        ]
                    },
                },
                ("failureThreshold", "replicas"),
            ),
            "advanced": obj(
                {
                    "restoreToOriginalReplicaCount": {"type": "boolean"},
                    "horizontalPodAutoscalerConfig": obj({"name": STR, "behavior": _BEHAVIOR}),
                }
            ),
            "triggers": {
                "type": "array",
                "minItems": 1,
                "items": obj(
                    {
                        "type": STR,
                        "name": STR,
                        "metadata": _MAP,
                        "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                        "useCachedMetrics": {"type": "boolean"},
                        "authenticationRef": obj(
                            {
                                "name": STR,
                                "kind": {
                                    "enum": [
                                        "TriggerAuthentication",
                                        "ClusterTriggerAuthentication",
                                    ]
                                },
                            },
                            ("name",),
                        ),
                    },
                    ("type", "metadata"),
                ),
            },
        },
        ("scaleTargetRef", "triggers"),
    ),
)

_PARENT = obj(
    {
        "group": STR,
        "kind": STR,
        "namespace": STR,
        "name": STR,
        "sectionName": STR,
        "port": INT,
    },
    ("name",),
)
_BACKEND = obj(
    {
        "group": STR,
        "kind": STR,
        "name": STR,
        "namespace": STR,
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "weight": {"type": "integer", "minimum": 0},
    },
    ("name",),
)

GATEWAY = resource(
    "gateway.networking.k8s.io/v1",
    "Gateway",
    obj(
        {
            "gatewayClassName": STR,
            "addresses": {
                "type": "array",
                "items": obj({"type": STR, "value": STR}, ("value",)),
            },
            "listeners": {
                "type": "array",
                "minItems": 1,
                "items": obj(
                    {
                        "name": STR,
                        "hostname": STR,
                        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                        "protocol": STR,
                        "allowedRoutes": obj(
                            {
                                "namespaces": obj({"from": {"enum": ["All", "Same", "Selector"]}}),
                                "kinds": {
                                    "type": "array",
                                    "items": obj({"group": STR, "kind": STR}, ("kind",)),
                                },
                            }
                        ),
                    },
                    ("name", "port", "protocol"),
                ),
            },
        },
        ("gatewayClassName", "listeners"),
    ),
)

HTTP_ROUTE = resource(
    "gateway.networking.k8s.io/v1",
    "HTTPRoute",
    obj(
        {
            "parentRefs": {"type": "array", "items": _PARENT},
            "hostnames": {"type": "array", "items": STR},
            "rules": {
                "type": "array",
                "items": obj(
                    {
                        "name": STR,
                        "backendRefs": {"type": "array", "items": _BACKEND},
                    }
                ),
            },
        }
    ),
)

CRD_SCHEMAS: dict[tuple[str, str], dict[str, Any]] = {
    ("keda.sh/v1alpha1", "ScaledObject"): SCALED_OBJECT,
    ("gateway.networking.k8s.io/v1", "Gateway"): GATEWAY,
    ("gateway.networking.k8s.io/v1", "HTTPRoute"): HTTP_ROUTE,
}


def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """The shared schemas above and every provider's (archform.verify.provider)."""
    from archform.verify.provider import crd_schemas as providers

    return {**CRD_SCHEMAS, **providers()}
