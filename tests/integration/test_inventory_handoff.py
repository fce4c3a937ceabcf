"""Pulumi -> Ansible handoff: mocked stack outputs become an inventory that site.yml accepts.

The generated Pulumi program runs under mocks with the real provider SDK; its exports are
written where `pulumi stack output --json > ansible/pulumi-outputs.json` would put them, and
the generated inventory script, ansible-inventory and ansible-playbook --syntax-check read them.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from archform.render.generate import generate
from archform.render.targets.common.training_view import training_view
from archform.spec import TrainingCluster, load_paths
from support import BLUEPRINTS, az_standin, require_module, require_tool

CASES = {
    "aws-p5-efa-fsx": ("pulumi_aws", None),
    "gcp-a3-mega-tcpxo": ("pulumi_gcp", None),
    "azure-nd-h100-v5": ("pulumi_azure_native", None),
    "platform-two-tier": ("pulumi_aws", "sivaro-train"),
}


def collections_env() -> dict[str, str]:
    from archform.verify.checks.ansible import collections_path

    path = collections_path()
    if path is None:
        require_tool("vendored-ansible-collections(scripts/vendor-collections.sh)")
    env = dict(os.environ)
    env["ANSIBLE_COLLECTIONS_PATH"] = str(path)
    return env


def hosts_of(inventory: dict[str, Any], group: str) -> set[str]:
    """Hosts of a group, through its children (ansible-inventory --list JSON)."""
    entry = inventory.get(group, {})
    found = set(entry.get("hosts", []))
    for child in entry.get("children", []):
        found |= hosts_of(inventory, child)
    return found


@pytest.mark.integration
@pytest.mark.parametrize("stem", sorted(CASES))
def test_mocked_outputs_feed_the_generated_inventory(stem: str, tmp_path: Path) -> None:
    sdk, name = CASES[stem]
    require_module("pulumi", sdk)
    require_tool("ansible-inventory", "ansible-playbook")
    from archform.verify.pulumi_mock import run_program
    from archform.verify.pulumi_projects import dry_run_config

    loaded = load_paths([BLUEPRINTS / f"{stem}.yaml"])
    docs = [d for d in loaded.documents if isinstance(d.model, TrainingCluster)]
    doc = next(d for d in docs if name is None or d.name == name)
    assert isinstance(doc.model, TrainingCluster)
    out = tmp_path / "tree"
    generate(loaded, out, docs=[doc])
    config, _mocked = dry_run_config(out / "pulumi")  # e.g. a capacity-block reservation id
    run = run_program(out / "pulumi", config)
    outputs = run.outputs
    (out / "ansible" / "pulumi-outputs.json").write_text(json.dumps(outputs, indent=2))

    env = collections_env()
    scale_sets = outputs["ansible_inventory"].get("scale_sets") or []
    if scale_sets:  # Azure: the inventory lists the scale set's live VMs (stand-in `az`)
        table = tmp_path / "instances.json"
        table.write_text(
            json.dumps(
                {
                    str(entry["name"]): {
                        str(i): f"10.42.1.{10 + i}" for i in range(len(entry["hostnames"]))
                    }
                    for entry in scale_sets
                }
            )
        )
        az_standin.install(tmp_path / "bin", table)
        env["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    listed = subprocess.run(
        ["ansible-inventory", "-i", "inventory/archform_inventory.py", "--list"],
        cwd=out / "ansible",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    inventory = json.loads(listed.stdout)
    view = training_view(doc.model)
    assert hosts_of(inventory, "controller") == {view.controller}
    assert hosts_of(inventory, "compute") == set(view.all_hostnames)
    assert hosts_of(inventory, "login") == set(view.login)
    for group in view.groups:
        assert hosts_of(inventory, f"compute_{group.name}") == set(group.hostnames)
    hostvars = inventory["_meta"]["hostvars"]
    first = view.all_hostnames[0]
    assert hostvars[first]["ansible_host"], "every node needs an address from the outputs"

    check = subprocess.run(
        ["ansible-playbook", "-i", "inventory/archform_inventory.py", "--syntax-check", "site.yml"],
        cwd=out / "ansible",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_missing_outputs_file_is_a_clear_error(tmp_path: Path) -> None:
    loaded = load_paths([BLUEPRINTS / "aws-p5-efa-fsx.yaml"])
    generate(loaded, tmp_path / "tree")
    script = tmp_path / "tree" / "ansible" / "inventory" / "archform_inventory.py"
    result = subprocess.run(
        ["python3", str(script), "--list"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, ARCHFORM_PULUMI_OUTPUTS=str(tmp_path / "nope.json")),
    )
    assert result.returncode != 0
    assert "pulumi stack output --json" in result.stderr
    assert "Traceback" not in result.stderr
