"""Golden trees of the fleet target, and byte-for-byte determinism across runs and hash seeds."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import support
from archform.render.targets.fleet.target import render_fleet
from archform.spec import InferenceFleet, load_paths
from support.fleet_cases import GCP_FIXTURE

SOURCES = [p for p in support.bundled_blueprints() if load_paths([p]).of_kind(InferenceFleet)] + [
    GCP_FIXTURE
]


def fleet_tree(path: Path) -> dict[str, bytes]:
    """{<fleet name>/<path>: bytes} of every fleet in a blueprint file."""
    blueprints = load_paths([path])
    tree: dict[str, bytes] = {}
    for doc in blueprints.of_kind(InferenceFleet):
        for f in render_fleet(doc, blueprints):
            tree[f"{doc.name}/{f.path}"] = f.content
    return tree


def digest(tree: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for rel in sorted(tree):
        h.update(rel.encode() + b"\0" + hashlib.sha256(tree[rel]).digest())
    return h.hexdigest()


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_golden_tree(path: Path, update_goldens: bool) -> None:
    support.compare_tree(fleet_tree(path), support.GOLDENS / "fleet" / path.stem, update_goldens)


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_rendering_twice_gives_identical_bytes(path: Path) -> None:
    assert fleet_tree(path) == fleet_tree(path)


def test_same_bytes_in_a_subprocess_with_other_hash_seeds() -> None:
    here = {str(p): digest(fleet_tree(p)) for p in SOURCES}
    code = (
        "import sys, json\n"
        f"sys.path[:0] = [{str(Path(__file__).parent)!r}, {str(support.ROOT / 'tests')!r}]\n"
        "from test_goldens import SOURCES, digest, fleet_tree\n"
        "print(json.dumps({str(p): digest(fleet_tree(p)) for p in SOURCES}))\n"
    )
    for seed in ("0", "4242"):
        env = {
            **os.environ,
            "PYTHONHASHSEED": seed,
            "PYTHONPATH": os.pathsep.join(
                [str(support.ROOT / "src"), os.environ.get("PYTHONPATH", "")]
            ),
        }
        out = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        assert __import__("json").loads(out.stdout) == here
