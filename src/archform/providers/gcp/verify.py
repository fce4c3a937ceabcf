"""GCP in verify: mocked Lustre, Filestore, GKE, addresses; the GKE custom resources.

The GKE custom resources' JSON schemas (kubernetes-validate has none) are written from the
documented fields, strict (unknown keys rejected), as the shared ones in
verify.checks.kubernetes_crds: multi-cluster Services ServiceExport net.gke.io/v1 and
HealthCheckPolicy networking.gke.io/v1
(https://cloud.google.com/kubernetes-engine/docs/how-to/multi-cluster-services,
https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources), and
GCPBackendPolicy and GCPGatewayPolicy networking.gke.io/v1.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from archform.verify.checks.kubernetes_crds import INT, STR, obj, resource
from archform.verify.provider import MOCK_CA, ProviderVerify, VerifyBase

SERVICE_EXPORT = resource("net.gke.io/v1", "ServiceExport", None)

HEALTH_CHECK_POLICY = resource(
    "networking.gke.io/v1",
    "HealthCheckPolicy",
    obj(
        {
            "default": obj(
                {
                    "checkIntervalSec": INT,
                    "timeoutSec": INT,
                    "healthyThreshold": INT,
                    "unhealthyThreshold": INT,
                    "logConfig": obj({"enabled": {"type": "boolean"}}),
                    "config": obj(
                        {
                            "type": {"enum": ["HTTP", "HTTPS", "HTTP2", "TCP", "GRPC"]},
                            "httpHealthCheck": obj(
                                {
                                    "portSpecification": STR,
                                    "port": INT,
                                    "portName": STR,
                                    "host": STR,
                                    "requestPath": STR,
                                    "response": STR,
                                    "proxyHeader": STR,
                                }
                            ),
                        },
                        ("type",),
                    ),
                }
            ),
            "targetRef": obj({"group": STR, "kind": STR, "name": STR}, ("kind", "name")),
        },
        ("targetRef",),
    ),
)

# https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources
# (backend service timeout, connection draining, logging, session affinity)
BACKEND_POLICY = resource(
    "networking.gke.io/v1",
    "GCPBackendPolicy",
    obj(
        {
            "default": obj(
                {
                    "timeoutSec": {"type": "integer", "minimum": 1, "maximum": 2147483647},
                    "connectionDraining": obj(
                        {"drainingTimeoutSec": {"type": "integer", "minimum": 0, "maximum": 3600}}
                    ),
                    "logging": obj(
                        {"enabled": {"type": "boolean"}, "sampleRate": {"type": "integer"}}
                    ),
                    "securityPolicy": STR,
                    "sessionAffinity": obj({"type": STR, "cookieTtlSec": INT}),
                }
            ),
            "targetRef": obj({"group": STR, "kind": STR, "name": STR}, ("kind", "name")),
        },
        ("targetRef",),
    ),
)

# https://cloud.google.com/kubernetes-engine/docs/how-to/configure-gateway-resources
# (SSL policy, global access, regional certificate map of a Gateway)
GATEWAY_POLICY = resource(
    "networking.gke.io/v1",
    "GCPGatewayPolicy",
    obj(
        {
            "default": obj(
                {
                    "sslPolicy": STR,
                    "allowGlobalAccess": {"type": "boolean"},
                    "regionalCertificateMap": STR,
                }
            ),
            "targetRef": obj({"group": STR, "kind": STR, "name": STR}, ("kind", "name")),
        },
        ("targetRef",),
    ),
)


CRD_SCHEMAS: dict[tuple[str, str], dict[str, Any]] = {
    ("net.gke.io/v1", "ServiceExport"): SERVICE_EXPORT,
    ("networking.gke.io/v1", "HealthCheckPolicy"): HEALTH_CHECK_POLICY,
    ("networking.gke.io/v1", "GCPBackendPolicy"): BACKEND_POLICY,
    ("networking.gke.io/v1", "GCPGatewayPolicy"): GATEWAY_POLICY,
}


def _filestore_networks(name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    nets = [dict(n, ipAddresses=["10.0.0.20"]) for n in inputs.get("networks") or []]
    return {"networks": nets}


class GcpVerify(VerifyBase):
    """Placeholders for what GCP computes and the generated programs read."""

    mock_outputs = MappingProxyType(
        {
            "gcp:lustre/instance:Instance": lambda name, inputs: {
                "mountPoint": f"10.0.0.30@tcp:/{inputs.get('filesystem', 'mockfs')}"
            },
            "gcp:filestore/instance:Instance": _filestore_networks,
            "gcp:container/cluster:Cluster": lambda name, inputs: {
                "masterAuth": {"clusterCaCertificate": MOCK_CA},
                # GKE reports the running version; at creation it is the requested minimum.
                "masterVersion": inputs.get("minMasterVersion"),
            },
            "gcp:compute/globalAddress:GlobalAddress": lambda name, inputs: {
                "address": "203.0.113.10"
            },
            "gcp:serviceaccount/account:Account": lambda name, inputs: {
                "email": f"{name}@mock-project.iam.gserviceaccount.com"
            },
        }
    )
    crd_schemas = CRD_SCHEMAS

    def mock_call(self, token: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The client's project, region and zone; the project's number."""
        if token.startswith("gcp:") and token.endswith("getClientConfig"):
            return {
                "project": "mock-project",
                "region": "mock-region",
                "zone": "mock-zone",
                "accessToken": "mock",
                "id": "mock",
                "defaultLabels": {},
            }
        if token == "gcp:organizations/getProject:getProject":
            return {"number": "123456789012", "projectId": "mock-project", "name": "mock"}
        return None


VERIFY: ProviderVerify = GcpVerify()
