"""Property: every blueprint that validates also generates, for every target.

Mutants of the bundled blueprints (the value mutations of test_fuzz.py plus targeted
values near every provider limit: node counts around the scale-set size, Lustre tiers,
small CIDR blocks, existing networks, tensor parallelism, registry providers, every
instance type of the catalog) either fail to load with a SpecError, or render with no
exception. A render-time failure is a check missing from archform.spec.buildable.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from archform.render.generate import build_files
from archform.spec import SpecError, load_text
from archform.spec.catalog import load_catalog
from spec.test_fuzz import VALUES, paths
from support import bundled_blueprints

FILES = [list(YAML(typ="safe").load_all(p.read_text())) for p in bundled_blueprints()]
FILES = [json.loads(json.dumps(docs, default=str)) for docs in FILES]

TARGETED: dict[str, list[Any]] = {
    "nodes": [1, 2, 3, 99, 100, 101, 150, 400, 1000],
    "throughput_mbps_per_tib": [40, 125, 200, 250, 500, 1000],
    "capacity_tib": [0.5, 1, 1.2, 4, 9, 100],
    "cidr": [f"10.0.0.0/{n}" for n in (16, 24, 25, 26, 27)] + ["fd00::/48"],
    "existing_vpc_id": ["vpc-0abc"],
    "existing_subnet_ids": [[], ["subnet-1"]],
    "tensor_parallel": [1, 2, 4, 8, 16],
    "provider": ["aws", "gcp", "azure", "onprem"],
    "instance_type": [*sorted(load_catalog().instances), "n1-standard-8", "x9.huge"],
    "source": ["s3://b/p/", "gs://b/p/", "az://c/p/", "https://acct.blob.core.windows.net/c/"],
    "deployment": ["scratch", "persistent"],
    "login_nodes": [0, 1, 4, 16],
    "kind": ["lustre", "nfs", "object", "infiniband", "efa", "roce", "ethernet"],
    "purchase": ["spot", "on_demand", "reserved", "capacity_block"],
    "min_nodes_per_region": [0, 1, 3],
    "max_nodes_per_region": [1, 2, 8],
    "region": ["us-east-1", "europe-west4", "eastus"],
    "zones": [[], ["1"], ["us-east-1a"]],
    "extra_groups": [
        [{"name": "more", "nodes": n, "instance_type": t}]
        for n in (2, 101)
        for t in ("a3-ultragpu-8g", "a3-megagpu-8g", "Standard_ND96isr_H100_v5", "p5.48xlarge")
    ],
}
# Where a targeted key is added when the document does not write it yet.
ADD_AT: dict[str, tuple[Any, ...]] = {
    "cidr": ("placement", "network"),
    "existing_vpc_id": ("placement", "network"),
    "existing_subnet_ids": ("placement", "network"),
    "tensor_parallel": ("server",),
    "login_nodes": ("scheduler",),
    "throughput_mbps_per_tib": ("storage", 0),
    "deployment": ("storage", 0),
    "source": ("storage", 0),
    "extra_groups": ("compute",),
}


def _at(data: Any, loc: tuple[Any, ...]) -> Any:
    for part in loc:
        data = data[part]
    return data


def _targets(doc: dict[str, Any], key: str) -> list[Any]:
    """The mappings where `key` is written, or where it can be added."""
    found = [_at(doc, loc[:-1]) for loc in paths(doc) if loc[-1] == key]
    if found:
        return found
    node: Any = doc
    for part in ADD_AT.get(key, ("<none>",)):
        if isinstance(node, dict) and isinstance(part, str):
            node = node.setdefault(part, {}) if part == "network" else node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return []
    return [node] if isinstance(node, dict) else []


MUTATION = st.tuples(
    st.sampled_from([True, True, True, False]),  # targeted, or an arbitrary value
    st.integers(0, 10**6),  # which place
    st.sampled_from(sorted(TARGETED)),
    st.integers(0, 10**6),  # which targeted value
    VALUES,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, len(FILES) - 1), mutations=st.lists(MUTATION, min_size=1, max_size=3))
def test_every_blueprint_that_validates_also_generates(
    which: int, mutations: list[tuple[bool, int, str, int, Any]]
) -> None:
    docs = json.loads(json.dumps(FILES[which]))
    for targeted, pick, key, choice, value in mutations:
        doc = docs[pick % len(docs)]
        if targeted:
            places = _targets(doc, key)
            if places:
                options = TARGETED[key]
                places[pick % len(places)][key] = options[choice % len(options)]
        else:
            locs = paths(doc)
            loc = locs[(pick // 7) % len(locs)]
            _at(doc, loc[:-1])[loc[-1]] = value
    text = "\n---\n".join(json.dumps(d, default=str, allow_nan=True) for d in docs)
    try:
        blueprints = load_text(text, "fuzz.yaml")
    except SpecError:
        return
    build_files(blueprints)  # must not raise: the loader accepted it
