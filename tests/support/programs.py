"""Generate a blueprint and run its Pulumi programs under mocks (cached per test session)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import support
from archform.render.generate import build_files
from archform.spec import load_text

CONFIG = {"dnsZoneId": "Z0000000000000000MOCK", "dnsName": "api.example.com"}
_TREES: dict[tuple[str, str], Path] = {}
_RUNS: dict[Path, Any] = {}


def generate(text: str, root: Path, key: str) -> Path:
    """Write the generated tree of a blueprint text under `root/key` (once per key)."""
    cache_key = (key, text)
    if cache_key not in _TREES:
        out = root / key.replace("@", "-")
        for f in build_files(load_text(text, f"<{key}>")):
            path = out / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(f.content)
        _TREES[cache_key] = out
    return _TREES[cache_key]


def projects(tree: Path) -> list[Path]:
    """Every Pulumi project folder in a generated tree."""
    return sorted(p.parent for p in tree.rglob("Pulumi.yaml"))


def run(project: Path) -> Any:
    """The mock run (archform.verify.pulumi_mock.MockRun) of one project, cached."""
    if project not in _RUNS:
        support.require_module(
            "pulumi", "pulumi_aws", "pulumi_gcp", "pulumi_azure_native", "pulumi_kubernetes"
        )
        from archform.verify.pulumi_mock import run_program
        from archform.verify.pulumi_projects import dry_run_config

        config, _ = dry_run_config(project)
        _RUNS[project] = run_program(project, {**config, **CONFIG})
    return _RUNS[project]
