"""Every key archform writes into slurm.conf, cgroup.conf, gres.conf and topology.conf is
one the declared release's own parser accepts (its option table in archform/spec/data/slurm,
read from that release's source), for every supported release and bundled training
blueprint, GPU, topology and health-check variants included."""

from __future__ import annotations

import json

import pytest

import support
from archform.render.generate import build_files
from archform.spec import load_paths, load_text, slurm
from archform.spec.models.training import TrainingCluster

FILES = ("slurm.conf", "cgroup.conf", "gres.conf", "topology.conf")
STEMS = ("aws-p5-efa-fsx", "onprem-h100-ib-lustre", "onprem-cpu-smoke", "gcp-a3-mega-tcpxo")


def _files(stem: str, release: str) -> dict[str, str]:
    doc = next(
        d
        for d in load_paths([support.BLUEPRINTS / f"{stem}.yaml"]).documents
        if isinstance(d.model, TrainingCluster)
    )
    data = doc.model.model_dump(mode="json", exclude_none=True)
    data["scheduler"] |= {"version": release, "health_checks": ["nhc", "dcgm"], "accounting": True}
    out = build_files(load_text(json.dumps(data), "variant.yaml"))
    return {
        f.path.rsplit("/", 1)[-1]: f.content.decode()
        for f in out
        if f.path.rsplit("/", 1)[-1] in FILES and "/roles/slurm/files/" in f.path
    }


@pytest.mark.parametrize("release", slurm.supported_releases())
@pytest.mark.parametrize("stem", STEMS)
def test_generated_keys_are_live_options_of_the_declared_release(stem: str, release: str) -> None:
    version = slurm.parse_version(release)
    problems = []
    files = _files(stem, release)
    assert "slurm.conf" in files and "cgroup.conf" in files
    for name, text in files.items():
        for raw in text.splitlines():
            if not raw.strip() or raw.startswith("#"):
                continue
            pairs = [w.partition("=")[::2] for w in raw.split()]
            key, value = pairs[0]
            found = slurm.check_option(version, key, value, file=name)
            if found is not None:
                problems.append(f"{name}: {found.message}")
            nested = slurm.known_options(release, name, line=key)
            if len(pairs) > 1 and not nested and key not in ("BlockSizes",):
                problems.append(f"{name}: {key} lines take no further keys in {release}")
            low = {k.lower() for k in nested}
            problems += [
                f"{name}: {key} line key {k} unknown to {release}"
                for k, _ in pairs[1:]
                if nested and k.lower() not in low
            ]
    assert not problems, problems
