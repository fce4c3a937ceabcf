"""Entry points: regions private behind the global front door, HTTP health checks on the
model endpoint at the load balancer, timeouts that fit the longest generation.

Checked on every fleet case's generated Kubernetes objects; provider behaviour cited inline.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from archform.render.generate import build_files
from support.fleet_cases import Case, fleet_cases

CASES = fleet_cases()


def _objects(case: Case) -> tuple[Any, dict[str, list[dict[str, Any]]]]:
    fleet, blueprints = case.load()
    found: dict[str, list[dict[str, Any]]] = {}
    for f in build_files(blueprints):  # type: ignore[arg-type]
        if f.path.startswith("kubernetes/"):
            obj = yaml.safe_load(f.content)
            found.setdefault(obj["kind"], []).append(obj)
    return fleet, found


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_regions_private_and_health_checked_on_the_model(case: Case) -> None:
    fleet, objs = _objects(case)
    provider = fleet.placement.provider
    public = bool(fleet.traffic and fleet.traffic.global_load_balancer)
    for svc in objs["Service"]:
        ann = svc["metadata"].get("annotations", {})
        if provider == "aws":
            # Global Accelerator reaches internal NLBs; nothing else should.
            assert ann["service.beta.kubernetes.io/aws-load-balancer-internal"] == "true"
            assert (
                ann["service.beta.kubernetes.io/aws-load-balancer-healthcheck-protocol"] == "http"
            )
            assert ann["service.beta.kubernetes.io/aws-load-balancer-healthcheck-path"] == "/health"
        elif provider == "azure":
            key = "service.beta.kubernetes.io/azure-load-balancer-health-probe-request-path"
            # /v1/models needs the API key; vLLM serves /health without it once loaded.
            assert ann[key] == "/health"
            if public:
                # Front Door's origins accept only Front Door's backend ranges.
                tags = ann["service.beta.kubernetes.io/azure-allowed-service-tags"]
                assert tags == "AzureFrontDoor.Backend"
            else:
                assert ann["service.beta.kubernetes.io/azure-load-balancer-internal"] == "true"
        elif public:
            assert svc["spec"]["type"] == "ClusterIP"  # only the multi-cluster Gateway reaches it
        else:
            assert ann["networking.gke.io/load-balancer-type"] == "Internal"


@pytest.mark.parametrize(
    "case", [c for c in CASES if c.id.endswith("@gcp") or c.id == "gcp-fleet"], ids=lambda c: c.id
)
def test_gke_backend_timeout_fits_the_longest_generation(case: Case) -> None:
    fleet, objs = _objects(case)
    if not (fleet.traffic and fleet.traffic.global_load_balancer):
        assert "GCPBackendPolicy" not in objs
        return
    (policy,) = objs["GCPBackendPolicy"]
    p99_s = fleet.traffic.p99_latency_ms / 1000
    # The global external Application LB's default backend timeout is 30 s.
    assert policy["spec"]["default"]["timeoutSec"] >= max(30, 2 * p99_s)
    assert policy["spec"]["targetRef"] == {
        "group": "net.gke.io",
        "kind": "ServiceImport",
        "name": fleet.name,
    }
    drain = policy["spec"]["default"]["connectionDraining"]["drainingTimeoutSec"]
    assert drain >= p99_s
