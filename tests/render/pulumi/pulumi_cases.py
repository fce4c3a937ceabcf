"""Shared helpers for the Pulumi target tests: bundled cloud clusters, generated projects, runs."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from archform.render.generate import build_files
from archform.render.writer import GeneratedFile, write_tree
from archform.spec import Document, TrainingCluster, load_paths
from support import BLUEPRINTS

# (blueprint file stem, TrainingCluster document name) for every bundled cloud cluster.
CLOUD_CLUSTERS = (
    ("aws-p5-efa-fsx", "aws-p5-train"),
    ("azure-nd-h100-v5", "azure-ndv5-train"),
    ("gcp-a3-mega-tcpxo", "gcp-a3mega-train"),
    ("platform-two-tier", "sivaro-train"),
)
IDS = [stem for stem, _ in CLOUD_CLUSTERS]


@dataclass(frozen=True)
class Case:
    stem: str
    doc: Document

    @property
    def cluster(self) -> TrainingCluster:
        assert isinstance(self.doc.model, TrainingCluster)
        return self.doc.model


def case(stem: str, name: str) -> Case:
    loaded = load_paths([BLUEPRINTS / f"{stem}.yaml"])
    return Case(stem, loaded.by_name[name])


def pulumi_files(c: Case) -> list[GeneratedFile]:
    """The generated pulumi/ files of one cluster (paths relative to the document root)."""
    files = build_files(load_paths([BLUEPRINTS / f"{c.stem}.yaml"]), [c.doc])
    return [f for f in files if f.path.startswith("pulumi/")]


def write_project(c: Case, root: Path) -> Path:
    write_tree(root, pulumi_files(c))
    return root / "pulumi"


@functools.cache
def mock_run(stem: str, name: str, tmp_root: str) -> object:
    """Run a bundled cluster's program under mocks once per session (dry-run config)."""
    from archform.verify.pulumi_mock import run_program
    from archform.verify.pulumi_projects import dry_run_config

    project = write_project(case(stem, name), Path(tmp_root) / stem)
    config, _ = dry_run_config(project)
    return run_program(project, config)
