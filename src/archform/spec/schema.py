"""JSON Schema of a blueprint document, for editors (yaml-language-server) and CI."""

from __future__ import annotations

from typing import Any

from archform.spec.models import blueprint_adapter

SCHEMA_ID = "https://archform.dev/schema/blueprint-v1.json"

# Keys that the loader fills from the hardware catalog: optional to the user.
_CATALOG_FILLED = {
    "TrainingCluster": ["fabric"],
    "Fabric": ["kind", "gbps_per_node"],
}


def blueprint_schema() -> dict[str, Any]:
    """The schema of one document (any kind), deterministic."""
    schema = blueprint_adapter().json_schema(mode="validation")
    defs = schema.get("$defs", {})
    for name, keys in _CATALOG_FILLED.items():
        required = defs.get(name, {}).get("required", [])
        for key in keys:
            if key in required:
                required.remove(key)
    out: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "archform blueprint v1",
        "description": "One document of an archform blueprint file. "
        "Catalog-known instance types fill gpu, cpu, memory_gib and fabric.",
    }
    out.update(schema)
    return out
