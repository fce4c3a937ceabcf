"""Shared fixtures: the fleet cases (bundled blueprints, the GCP fixture, provider variants)."""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass
from pathlib import Path

from ruamel.yaml import YAML

import support
from archform.spec import InferenceFleet, load_paths, load_text
from archform.spec.models.inference import InferenceFleet as Fleet

HERE = Path(__file__).resolve().parents[1] / "render" / "fleet"
GCP_FIXTURE = HERE / "gcp-fleet.yaml"

# Per provider: regions to use and GPU/system instance types for a "small" (A10/L4-class,
# tensor_parallel <= 2), "medium" (4 GPUs per node) and "big" (8 x H100) pool.
PROVIDERS = {
    "aws": {
        "regions": ["us-east-1", "eu-north-1", "ap-northeast-1"],
        "scheme": "s3",
        "gpu": {"small": "g5.12xlarge", "medium": "g5.12xlarge", "big": "p5.48xlarge"},
        "system": "m6i.xlarge",
    },
    "gcp": {
        "regions": ["us-central1", "europe-west4", "asia-southeast1"],
        "scheme": "gs",
        "gpu": {"small": "g2-standard-24", "medium": "g2-standard-48", "big": "a3-highgpu-8g"},
        "system": "n2-standard-8",
    },
    "azure": {
        "regions": ["eastus", "westeurope", "southcentralus"],
        "scheme": "https",
        "gpu": {
            "small": "Standard_NV72ads_A10_v5",
            "medium": "Standard_ND96asr_v4",
            "big": "Standard_ND96isr_H100_v5",
        },
        "system": "Standard_D8s_v5",
    },
}


@dataclass(frozen=True)
class Case:
    """One fleet to generate: its id, the loaded document's fleet and the blueprint text."""

    id: str
    text: str

    def load(self) -> tuple[Fleet, object]:
        blueprints = load_text(self.text, f"<{self.id}>")
        doc = blueprints.of_kind(InferenceFleet)[0]
        assert isinstance(doc.model, Fleet)
        return doc.model, blueprints


def _dump(data: dict) -> str:
    buf = io.StringIO()
    YAML(typ="safe", pure=True).dump(data, buf)
    return buf.getvalue()


def _size(raw: dict) -> str:
    tp = raw["server"].get("tensor_parallel", 1)
    if "p5" in raw["gpu_pool"]["instance_type"] or "H100" in raw["gpu_pool"]["instance_type"]:
        return "big"
    return "medium" if tp > 2 else "small"


# A deployer network of each provider's kind (kubernetes.deployer.network; spec.deployer).
DEPLOYER_NETWORKS = {
    "aws": "tgw-0a1b2c3d4e5f60718",
    "azure": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/ops/providers/"
    "Microsoft.Network/virtualNetworks/deployers",
    "gcp": "projects/corp-net-hub/locations/global/hubs/deployers",
}


def deployer_network(provider: str, regions: list[str]) -> str | dict[str, str]:
    """The deployer network field for a fleet in `regions` (transit gateways are regional)."""
    if provider == "aws" and len(regions) > 1:
        return {r: f"tgw-0{i}b2c3d4e5f60718" for i, r in enumerate(regions)}
    return DEPLOYER_NETWORKS[provider]


def variant(raw: dict, provider: str) -> dict:
    """The same fleet retargeted to another cloud (regions, instances, registry URI)."""
    out = copy.deepcopy(raw)
    spec = PROVIDERS[provider]
    n = len(raw["placement"].get("regions") or [raw["placement"]["region"]])
    regions = spec["regions"][:n]
    out["placement"] = {"provider": provider, "regions": regions}
    out["gpu_pool"]["instance_type"] = spec["gpu"][_size(raw)]
    out["gpu_pool"].pop("gpu", None)
    if out.get("system_pool"):
        out["system_pool"]["instance_type"] = spec["system"]
    path = raw["model"]["source"].split("://", 1)[1].split("/", 1)[1]
    host = "corpmodels.blob.core.windows.net/registry" if provider == "azure" else "corp-models"
    out["model"]["source"] = f"{spec['scheme']}://{host}/{path}"
    out["model"]["source_region"] = regions[0]
    out["model"].pop("source_account_id", None)
    if provider == "azure":
        out["model"]["source_account_id"] = (
            "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/models"
            "/providers/Microsoft.Storage/storageAccounts/corpmodels"
        )
    out["name"] = f"{raw['name']}-{provider}"[:39]
    deployer = (out.get("kubernetes") or {}).get("deployer")
    if deployer and deployer.get("network"):
        deployer["network"] = deployer_network(provider, regions)
    return out


def bundled_fleets() -> list[tuple[str, dict]]:
    """(file stem, raw document) of every InferenceFleet in the bundled blueprints."""
    found = []
    for path in support.bundled_blueprints():
        for doc in load_paths([path]).of_kind(InferenceFleet):
            found.append((path.stem if doc.index == 0 else f"{path.stem}-{doc.name}", doc.raw))
    return found


def fleet_cases() -> list[Case]:
    """Bundled fleets as written, the GCP fixture, and every bundled fleet on each other cloud."""
    cases = []
    for stem, raw in bundled_fleets():
        cases.append(Case(stem, _dump(raw)))
        for provider in sorted(PROVIDERS):
            if provider != raw["placement"]["provider"]:
                cases.append(Case(f"{stem}@{provider}", _dump(variant(raw, provider))))
    cases.append(Case("gcp-fleet", GCP_FIXTURE.read_text("utf-8")))
    return cases
