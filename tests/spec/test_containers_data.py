"""spec/data/containers.yaml: facts about enroot and per-fabric container needs, with sources."""

from __future__ import annotations

import typing

from archform.render.targets.ansible.roles import VERSIONS
from archform.spec.containers import created_by_enroot, load_containers, uncreated_paths
from archform.spec.datafile import load_data
from archform.spec.models.training import FabricKind


def test_every_fabric_kind_has_an_entry_with_a_source() -> None:
    kinds = set(typing.get_args(FabricKind))
    table = load_containers()
    assert kinds and kinds == set(table.fabrics), (kinds, set(table.fabrics))
    for needs in table.fabrics.values():
        assert needs.source.startswith("https://"), needs.kind


def _strings(node: object) -> list[str]:
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return [node] if isinstance(node, str) else []


def test_every_github_source_is_pinned_to_a_commit() -> None:
    urls = [s for s in _strings(load_data("containers.yaml")) if "github.com/" in s]
    assert len(urls) >= 10
    for url in urls:
        ref = url.split("/blob/")[1].split("/")[0]
        # awslabs/ai-on-eks: a walkthrough, its path facts are marked unverified in the file.
        assert len(ref) == 40 or "/awslabs/ai-on-eks/" in url, url


def test_the_enroot_release_is_the_one_the_roles_install() -> None:
    assert load_containers().enroot.version == VERSIONS["enroot_version"]


def test_enroot_creates_its_three_folders_and_their_parents() -> None:
    values = {
        "ENROOT_RUNTIME_PATH": "/nvme/enroot/1000/runtime",
        "ENROOT_CACHE_PATH": "/nvme/enroot/1000/cache",
        "ENROOT_DATA_PATH": "/nvme/enroot/1000/data",
    }
    made = created_by_enroot(values)
    assert {"/nvme/enroot/1000", "/nvme/enroot", "/nvme/enroot/1000/data"} <= made
    ok = {**values, "ENROOT_TEMP_PATH": "/nvme/enroot/1000"}
    assert uncreated_paths(ok, set()) == []
    old = {**values, "ENROOT_TEMP_PATH": "/nvme/enroot/1000/tmp"}
    assert uncreated_paths(old, set()) == [("ENROOT_TEMP_PATH", "/nvme/enroot/1000/tmp")]
    assert uncreated_paths(old, {"/nvme/enroot/1000/tmp"}) == []
