"""CONTRIBUTING.md's recipes work as written: applied to a copy of the source tree.

"Add an instance type" (a catalog.yaml entry, then scripts/gen-catalog-json) and "Add a lint
rule" (one module under lint/rules/<area>/ with the @rule decorator) are applied to a
temporary copy of src/ and scripts/, and `archform lint` from that copy must accept the new
instance type and report the new rule at the fixture's line. Nothing is installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

GUIDE = ROOT / "CONTRIBUTING.md"

BLUEPRINT = """\
version: 1
kind: TrainingCluster
name: demo
placement: {provider: aws, region: us-east-1}
compute: {name: gpu, nodes: 2, instance_type: p5.96xlarge}
fabric: {kind: efa}
storage:
  - name: scratch
    kind: nfs
    purpose: scratch
    capacity_tib: 1
    mount: /tmp/scratch
"""

# The recipe's new catalog entry: a copy of p5.48xlarge's facts under a name the real catalog
# does not have (this copy is thrown away).
ENTRY = """\
  p5.96xlarge:
    # Recipe test entry (a copy of p5.48xlarge's facts under a new name).
    cpu: {cores_per_socket: 48, sockets: 2, threads_per_core: 2}
    ethernet_gbps: 800
    fabric: {gbps: 3200, interfaces: 32, kind: efa}
    family: p5
    gpu: {count: 8, model: H100}
    kind: gpu
    local_nvme_gib: 30720
    memory_gib: 2048
    provider: aws
    source: https://aws.amazon.com/ec2/instance-types/p5/
    vcpus: 192
"""

RULE = '''\
"""Storage mounted under /tmp.

## What it does
Flags a storage entry whose mount point is under /tmp.

## Why is this bad?
systemd-tmpfiles cleans /tmp on a schedule (tmpfiles.d(5)), so files there can vanish.

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute: {nodes: 1, gpu: {model: H100, per_node: 8}}
fabric: {kind: infiniband, gbps_per_node: 3200}
storage:
  - {name: s, kind: nfs, purpose: scratch, capacity_tib: 1, mount: /tmp/s}
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute: {nodes: 1, gpu: {model: H100, per_node: 8}}
fabric: {kind: infiniband, gbps_per_node: 3200}
storage:
  - {name: s, kind: nfs, purpose: scratch, capacity_tib: 1, mount: /scratch}
```

## References
- tmpfiles.d(5): https://www.freedesktop.org/software/systemd/man/latest/tmpfiles.d.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="STO099", name="mount-under-tmp", severity="warning")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Mount point under /tmp."""
    for doc, tc in ctx.training():
        for i, store in enumerate(tc.storage):
            if store.mount.startswith("/tmp/"):
                yield Hit(doc, ("storage", i, "mount"), f"{store.mount} is under /tmp",
                          "mount it outside /tmp")
'''


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """src/ and scripts/ copied (no caches), as a new maintainer's throwaway clone."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_version.py")
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=ignore)
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts", ignore=ignore)
    version = ROOT / "src" / "archform" / "_version.py"
    if version.exists():
        shutil.copy(version, tmp_path / "src" / "archform" / "_version.py")
    (tmp_path / "demo.yaml").write_text(BLUEPRINT, "utf-8")
    return tmp_path


def _run(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(copy / "src"),
        "ARCHFORM_TODAY": "2026-11-30",
        "NO_COLOR": "1",
    }
    env.pop("ARCHFORM_CATALOG", None)
    return subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=60
    )


def _lint(copy: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(copy, "-m", "archform", "lint", "demo.yaml", "--format", "json", *args)


def test_the_guide_names_the_steps_this_test_applies() -> None:
    guide = GUIDE.read_text("utf-8")
    for step in (
        "src/archform/spec/data/catalog.yaml",
        "python scripts/gen-catalog-json",
        "src/archform/lint/rules/<area>/<code>_<what_is_wrong>.py",
        "@rule(code=",
        "tests/rules/fixtures/",
    ):
        assert step in guide, step


def test_add_an_instance_type_then_a_rule_in_a_copy(copy: Path) -> None:
    before = _lint(copy)
    assert before.returncode == 2, before.stdout + before.stderr
    assert "p5.96xlarge" in before.stderr

    # Add an instance type: the catalog entry, then the JSON twin regenerated.
    catalog = copy / "src" / "archform" / "spec" / "data" / "catalog.yaml"
    text = catalog.read_text("utf-8")
    anchor = "  p5.4xlarge:\n"
    assert anchor in text
    catalog.write_text(text.replace(anchor, ENTRY + anchor, 1), "utf-8")
    regen = _run(copy, "scripts/gen-catalog-json")
    assert regen.returncode == 0, regen.stderr
    added = _lint(copy)
    assert added.returncode in (0, 1), added.stdout + added.stderr
    assert "STO099" not in added.stdout

    # Add a rule: one module in its area folder, found by its file.
    (copy / "src" / "archform" / "lint" / "rules" / "sto" / "sto099_mount_under_tmp.py").write_text(
        RULE, "utf-8"
    )
    ruled = _lint(copy, "--select", "STO099")
    assert ruled.returncode in (0, 1), ruled.stdout + ruled.stderr
    findings = json.loads(ruled.stdout)
    hits = [f for f in _findings(findings) if f.get("rule") == "STO099"]
    assert len(hits) == 1, ruled.stdout
    assert hits[0]["line"] == BLUEPRINT.splitlines().index("    mount: /tmp/scratch") + 1


def _findings(report: object) -> list[dict[str, object]]:
    """The finding records of a JSON lint report (a list, or under "findings")."""
    if isinstance(report, dict):
        report = report.get("findings", [])
    assert isinstance(report, list)
    return [f for f in report if isinstance(f, dict)]


def test_readme_package_map_names_every_package() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    start = readme.index("```\nsrc/archform/\n")
    block = readme[start : readme.index("```", start + 4)]
    packages = sorted(
        p.name
        for p in (ROOT / "src" / "archform").iterdir()
        if p.is_dir() and (p / "__init__.py").is_file()
    )
    missing = [name for name in packages if f"  {name}/" not in block]
    assert missing == [], f"README.md's package map lacks {missing}"
