"""Day-1 findings of the second practitioner review, each on archform's own generated tree.

Every test here reads the tree archform generates for a bundled blueprint (blueprints/*.yaml)
and fails on the output of commit b0c054e. Expected values come from the vendors' sources named
in each test, not from archform's own output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import support
from archform.render.generate import build_files
from archform.render.targets.ansible import slurm_conf
from archform.render.targets.common.training_view import training_view
from archform.spec import load_paths, load_text
from archform.spec.models.training import TrainingCluster


def _tree(stem: str) -> dict[str, str]:
    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    return {f.path: f.content.decode("utf-8", "replace") for f in build_files(loaded)}


def _cluster(stem: str) -> TrainingCluster:
    [doc] = load_paths([support.BLUEPRINTS / f"{stem}.yaml"]).documents
    assert isinstance(doc.model, TrainingCluster)
    return doc.model


def _conf(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and "=" in line.split()[0]:
            key, _, value = line.split()[0].partition("=")
            out[key] = value
    return out


def _yaml(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


# --- GCP a3-mega: Cluster Toolkit's long prolog timeouts --------------------------------------


def test_tcpxo_slurm_conf_has_cluster_toolkits_long_prolog_timeouts() -> None:
    # cluster-toolkit@1047080 long-prolog-slurm.conf.tpl (the a3mega blueprint's slurm_conf_tpl):
    # MessageTimeout=600, BatchStartTimeout=600, PrologEpilogTimeout=600.
    conf = _conf(_tree("gcp-a3-mega-tcpxo")["ansible/roles/slurm/files/slurm.conf"])
    assert (conf.get("MessageTimeout"), conf.get("BatchStartTimeout")) == ("600", "600")
    assert conf.get("PrologEpilogTimeout") == "600"  # the blueprint declares Slurm 24.11


def test_long_prolog_timeouts_follow_the_release_and_only_tcpxo_gets_them() -> None:
    view = training_view(_cluster("gcp-a3-mega-tcpxo"))
    for release, keys in (
        ("24.11", {"PrologEpilogTimeout"}),
        # SchedMD/slurm 60be338225 (first in slurm-25-05-0-1): PrologTimeout and EpilogTimeout.
        ("25.05", {"PrologTimeout", "EpilogTimeout"}),
        ("26.05", {"PrologTimeout", "EpilogTimeout"}),
    ):
        lines = slurm_conf.slurm_context(view, release).global_lines
        found = {k for [(k, _v)] in (line[:1] for line in lines) if "Timeout" in k}
        assert keys <= found and not ({"PrologEpilogTimeout"} - keys) & found, (release, found)
    other = _conf(_tree("aws-p5-efa-fsx")["ansible/roles/slurm/files/slurm.conf"])
    assert not {"PrologEpilogTimeout", "BatchStartTimeout", "MessageTimeout"} & set(other)
