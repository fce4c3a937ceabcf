"""Golden trees of the generated Pulumi projects; rendering is deterministic."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pulumi_cases as pc
import pytest

import support
from support import GOLDENS, ROOT, compare_tree, tree_bytes


@pytest.mark.parametrize(("stem", "name"), pc.CLOUD_CLUSTERS, ids=pc.IDS)
def test_pulumi_tree_matches_golden(stem: str, name: str, update_goldens: bool) -> None:
    files = pc.pulumi_files(pc.case(stem, name))
    compare_tree(tree_bytes(files), GOLDENS / "pulumi" / stem, update_goldens)


@pytest.mark.parametrize(("stem", "name"), pc.CLOUD_CLUSTERS, ids=pc.IDS)
def test_rendering_twice_gives_identical_bytes(stem: str, name: str) -> None:
    first = tree_bytes(pc.pulumi_files(pc.case(stem, name)))
    second = tree_bytes(pc.pulumi_files(pc.case(stem, name)))
    assert first == second


_DIGEST = """
import hashlib, json, sys
sys.path.insert(0, sys.argv[1])
import pulumi_cases as pc
out = {}
for stem, name in pc.CLOUD_CLUSTERS:
    for f in pc.pulumi_files(pc.case(stem, name)):
        out[stem + "/" + f.path] = hashlib.sha256(f.content).hexdigest()
print(json.dumps(out, sort_keys=True))
"""


@pytest.mark.slow
def test_rendering_does_not_depend_on_hash_seed() -> None:
    digests = []
    for seed in ("1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests")])
        proc = subprocess.run(
            [sys.executable, "-c", _DIGEST, str(Path(pc.__file__).parent)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        digests.append(json.loads(proc.stdout))
    assert digests[0] == digests[1]
    local = {
        f"{stem}/{f.path}": hashlib.sha256(f.content).hexdigest()
        for stem, name in pc.CLOUD_CLUSTERS
        for f in pc.pulumi_files(pc.case(stem, name))
    }
    assert digests[0] == local


@pytest.mark.parametrize(("stem", "name"), pc.CLOUD_CLUSTERS, ids=pc.IDS)
def test_requirements_pin_the_sdks_the_tests_ran(stem: str, name: str) -> None:
    """requirements.txt pins exactly the SDK versions these tests exercised under mocks."""
    from importlib.metadata import PackageNotFoundError, version

    files = {f.path: f.content.decode() for f in pc.pulumi_files(pc.case(stem, name))}
    pins = [
        line.split("==")
        for line in files["pulumi/requirements.txt"].splitlines()
        if line and not line.startswith("#")
    ]
    assert len(pins) == 2 and pins[0][0] == "pulumi"
    for package, pinned in pins:
        try:
            installed = version(package)
        except PackageNotFoundError:
            support.require_module(package.replace("-", "_"))  # fails in CI, skips locally
            pytest.skip(f"{package} not installed")
        assert installed == pinned, f"{package}: pinned {pinned}, tested with {installed}"
