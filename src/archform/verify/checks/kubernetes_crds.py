"""JSON schemas for the custom resources the fleet generates (kubernetes-validate has none).

Written from each project's documented fields, strict (unknown keys rejected), so a CRD
object gets the same treatment as a core one:
- KEDA ScaledObject keda.sh/v1alpha1: https://keda.sh/docs/2.16/reference/scaledobject-spec/
- Gateway API v1 Gateway/HTTPRoute (standard channel): https://gateway-api.sigs.k8s.io/reference/spec/
- GKE multi-cluster Services ServiceExport net.gke.io/v1 and HealthCheckPolicy
  networking.gke.io/v1: https://cloud.google.com/kubernetes-engine/docs/how-to/multi-cluster-services,
  https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources
  (also GCPBackendPolicy and GCPGatewayPolicy networking.gke.io/v1)
Only the documented fields are listed; a field outside them fails, as in --strict.
"""

from __future__ import annotations

from typing import Any

_STR: dict[str, Any] = {"type": "string"}
_INT: dict[str, Any] = {"type": "integer"}
_DNS = {
    "type": "string",
    "maxLength": 253,
    "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
}
_MAP = {"type": "object", "additionalProperties": {"type": "string"}}


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


_META = _obj({"name": _DNS, "namespace": _DNS, "labels": _MAP, "annotations": _MAP}, ("name",))


def _resource(api_version: str, kind: str, spec: dict[str, Any] | None) -> dict[str, Any]:
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


_POLICY = _obj(
    {"type": {"enum": ["Pods", "Percent"]}, "value": _INT, "periodSeconds": _INT},
    ("type", "value", "periodSeconds"),
)
_RULES = _obj(
    {
        "stabilizationWindowSeconds": _INT,
        "selectPolicy": {"enum": ["Max", "Min", "Disabled"]},
        "policies": {"type": "array", "items": _POLICY},
    }
)
_BEHAVIOR = _obj({"scaleUp": _RULES, "scaleDown": _RULES})

SCALED_OBJECT = _resource(
    "keda.sh/v1alpha1",
    "ScaledObject",
    _obj(
        {
            "scaleTargetRef": _obj(
                {"apiVersion": _STR, "kind": _STR, "name": _STR, "envSourceContainerName": _STR},
                ("name",),
            ),
            "pollingInterval": _INT,
            "cooldownPeriod": _INT,
            "initialCooldownPeriod": _INT,
            "idleReplicaCount": _INT,
            "minReplicaCount": {"type": "integer", "minimum": 0},
            "maxReplicaCount": {"type": "integer", "minimum": 1},
            "fallback": _obj(
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
            "advanced": _obj(
                {
                    "restoreToOriginalReplicaCount": {"type": "boolean"},
                    "horizontalPodAutoscalerConfig": _obj({"name": _STR, "behavior": _BEHAVIOR}),
                }
            ),
            "triggers": {
                "type": "array",
                "minItems": 1,
                "items": _obj(
                    {
                        "type": _STR,
                        "name": _STR,
                        "metadata": _MAP,
                        "metricType": {"enum": ["AverageValue", "Value", "Utilization"]},
                        "useCachedMetrics": {"type": "boolean"},
                        "authenticationRef": _obj(
                            {
                                "name": _STR,
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

_PARENT = _obj(
    {
        "group": _STR,
        "kind": _STR,
        "namespace": _STR,
        "name": _STR,
        "sectionName": _STR,
        "port": _INT,
    },
    ("name",),
)
_BACKEND = _obj(
    {
        "group": _STR,
        "kind": _STR,
        "name": _STR,
        "namespace": _STR,
        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
        "weight": {"type": "integer", "minimum": 0},
    },
    ("name",),
)

GATEWAY = _resource(
    "gateway.networking.k8s.io/v1",
    "Gateway",
    _obj(
        {
            "gatewayClassName": _STR,
            "addresses": {
                "type": "array",
                "items": _obj({"type": _STR, "value": _STR}, ("value",)),
            },
            "listeners": {
                "type": "array",
                "minItems": 1,
                "items": _obj(
                    {
                        "name": _STR,
                        "hostname": _STR,
                        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                        "protocol": _STR,
                        "allowedRoutes": _obj(
                            {
                                "namespaces": _obj({"from": {"enum": ["All", "Same", "Selector"]}}),
                                "kinds": {
                                    "type": "array",
                                    "items": _obj({"group": _STR, "kind": _STR}, ("kind",)),
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

HTTP_ROUTE = _resource(
    "gateway.networking.k8s.io/v1",
    "HTTPRoute",
    _obj(
        {
            "parentRefs": {"type": "array", "items": _PARENT},
            "hostnames": {"type": "array", "items": _STR},
            "rules": {
                "type": "array",
                "items": _obj(
                    {
                        "name": _STR,
                        "backendRefs": {"type": "array", "items": _BACKEND},
                    }
                ),
            },
        }
    ),
)

SERVICE_EXPORT = _resource("net.gke.io/v1", "ServiceExport", None)

HEALTH_CHECK_POLICY = _resource(
    "networking.gke.io/v1",
    "HealthCheckPolicy",
    _obj(
        {
            "default": _obj(
                {
                    "checkIntervalSec": _INT,
                    "timeoutSec": _INT,
                    "healthyThreshold": _INT,
                    "unhealthyThreshold": _INT,
                    "logConfig": _obj({"enabled": {"type": "boolean"}}),
                    "config": _obj(
                        {
                            "type": {"enum": ["HTTP", "HTTPS", "HTTP2", "TCP", "GRPC"]},
                            "httpHealthCheck": _obj(
                                {
                                    "portSpecification": _STR,
                                    "port": _INT,
                                    "portName": _STR,
                                    "host": _STR,
                                    "requestPath": _STR,
                                    "response": _STR,
                                    "proxyHeader": _STR,
                                }
                            ),
                        },
                        ("type",),
                    ),
                }
            ),
            "targetRef": _obj({"group": _STR, "kind": _STR, "name": _STR}, ("kind", "name")),
        },
        ("targetRef",),
    ),
)

# https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources
# (backend service timeout, connection draining, logging, session affinity)
GCP_BACKEND_POLICY = _resource(
    "networking.gke.io/v1",
    "GCPBackendPolicy",
    _obj(
        {
            "default": _obj(
                {
                    "timeoutSec": {"type": "integer", "minimum": 1, "maximum": 2147483647},
                    "connectionDraining": _obj(
                        {"drainingTimeoutSec": {"type": "integer", "minimum": 0, "maximum": 3600}}
                    ),
                    "logging": _obj(
                        {"enabled": {"type": "boolean"}, "sampleRate": {"type": "integer"}}
                    ),
                    "securityPolicy": _STR,
                    "sessionAffinity": _obj({"type": _STR, "cookieTtlSec": _INT}),
                }
            ),
            "targetRef": _obj({"group": _STR, "kind": _STR, "name": _STR}, ("kind", "name")),
        },
        ("targetRef",),
    ),
)

# https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources
# (SSL policy, global access, regional certificate map of a Gateway)
GCP_GATEWAY_POLICY = _resource(
    "networking.gke.io/v1",
    "GCPGatewayPolicy",
    _obj(
        {
            "default": _obj(
                {
                    "sslPolicy": _STR,
                    "allowGlobalAccess": {"type": "boolean"},
                    "regionalCertificateMap": _STR,
                }
            ),
            "targetRef": _obj({"group": _STR, "kind": _STR, "name": _STR}, ("kind", "name")),
        },
        ("targetRef",),
    ),
)

CRD_SCHEMAS: dict[tuple[str, str], dict[str, Any]] = {
    ("keda.sh/v1alpha1", "ScaledObject"): SCALED_OBJECT,
    ("gateway.networking.k8s.io/v1", "Gateway"): GATEWAY,
    ("gateway.networking.k8s.io/v1", "HTTPRoute"): HTTP_ROUTE,
    ("net.gke.io/v1", "ServiceExport"): SERVICE_EXPORT,
    ("networking.gke.io/v1", "HealthCheckPolicy"): HEALTH_CHECK_POLICY,
    ("networking.gke.io/v1", "GCPBackendPolicy"): GCP_BACKEND_POLICY,
    ("networking.gke.io/v1", "GCPGatewayPolicy"): GCP_GATEWAY_POLICY,
}
