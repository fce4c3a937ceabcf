"""A new provider is one new package plus catalog entries: proven on a copy of the source.

The test copies archform's source (src/, templates/, blueprints/) to a temporary folder,
adds a skeleton provider `lab` there (a site: the blueprint lists its hosts) as one package
under archform/providers/lab/ and its node image rows in spec/data/images.yaml, and nothing
else. Then it drives the real CLI of the copy: the skeleton validates and generates the
Ansible project of a TrainingCluster, and refuses at the blueprint line (file:line:col,
exit 2) what it does not implement: inference fleets, a model registry, Lustre over LNet,
a Pulumi program to extend.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from support import ROOT, run_cli

PACKAGE = {
    "__init__.py": '''"""Lab: a skeleton provider, a site whose hosts the blueprint lists."""

RANK = 10
''',
    "spec.py": '''"""Lab blueprint facts: a site, nothing beyond the defaults."""

from archform.spec.provider import ProviderSpec
from archform.spec.provider_base import SpecBase


class Lab(SpecBase):
    """Hosts in a lab: Slurm through Ansible only."""

    name = "lab"
    label = "lab"


SPEC: ProviderSpec = Lab()
''',
    "render/__init__.py": '''"""Lab render facts: no Pulumi target (the ansible target alone)."""

from archform.render.target import Target
from archform.render.targets.common.clouds import CloudFacts

FACTS = CloudFacts(
    name="lab",
    pulumi_sdk=None,
    system_pool_instance=None,
    cli_image=None,
    nfs_mount_options="nfsvers=4.1,hard,_netdev",
    local_nvme_path="/mnt/lab-nvme",
    lustre_packages=(),
    object_uri=None,
)
TARGETS: list[Target] = []
''',
}

CLUSTER = """\
version: 1
kind: TrainingCluster
name: bench
description: One CPU node in the lab
owner: ml-infra
purpose: hpc
placement:
  provider: lab
  region: lab-1
compute:
  nodes: 1
  cpu: {sockets: 1, cores_per_socket: 2, threads_per_core: 1}
  memory_gib: 4
  image: debian-12
fabric: {kind: ethernet, gbps_per_node: 10, rails: 1, topology: {kind: flat},
         gpudirect_rdma: false}
hosts:
  connection: local
  controller: {name: localhost, address: 127.0.0.1}
  compute:
    - {name: localhost, address: 127.0.0.1}
scheduler:
  kind: slurm
  version: "22.05"
  partitions:
    - {name: debug, default: true, max_time_hours: 1, exclusive: false}
  accounting: false
  containers: none
"""


def _copy(tmp_path: Path) -> Path:
    """archform's source in `tmp_path`, plus the `lab` package and its catalog rows."""
    root = tmp_path / "tree"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("src", "templates", "blueprints"):
        shutil.copytree(ROOT / part, root / part, ignore=ignore)
    package = root / "src/archform/providers/lab"
    for rel, text in PACKAGE.items():
        (package / rel).parent.mkdir(parents=True, exist_ok=True)
        (package / rel).write_text(text)
    images = root / "src/archform/spec/data/images.yaml"
    text = images.read_text()
    for old, new in (
        ("    providers:\n      onprem: null\n    codename: bookworm", "lab: null"),
        ("    lustre: {onprem: unavailable}\n", "lab: unavailable"),
    ):
        assert old in text, "images.yaml changed: update the skeleton's catalog rows"
        if old.startswith("    providers"):
            text = text.replace(old, old.replace("onprem: null", f"onprem: null\n      {new}"))
        else:
            text = text.replace(old, old.replace("unavailable}", f"unavailable, {new}}}"))
    defaults = "  onprem: [ubuntu-22.04, ubuntu-24.04, dgx-os-6, debian-12]\n"
    assert defaults in text
    images.write_text(text.replace(defaults, defaults + "  lab: [debian-12]\n"))
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy(tmp_path_factory.mktemp("skeleton"))


def _cli(tree: Path, *args: str) -> tuple[int, str]:
    result = run_cli(args, cwd=tree, env={"PYTHONPATH": str(tree / "src")}, timeout=300)
    return result.returncode, result.stdout + result.stderr


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_skeleton_validates_and_generates_its_ansible_project(tree: Path) -> None:
    (tree / "bench.yaml").write_text(CLUSTER)
    code, out = _cli(tree, "validate", "bench.yaml")
    assert code == 0, out
    code, out = _cli(tree, "generate", "bench.yaml", "-o", "out")
    assert code == 0, out
    generated = tree / "out"
    group_vars = (generated / "ansible/group_vars/all.yml").read_text()
    # The skeleton's own facts reached the shared ansible target, no other provider's.
    assert 'archform_provider: "lab"' in group_vars
    assert 'nfs_mount_options: "nfsvers=4.1,hard,_netdev"' in group_vars
    assert 'enroot_local_path: "/mnt/lab-nvme"' in group_vars
    assert (generated / "ansible/site.yml").is_file()
    assert not (generated / "pulumi").exists(), "the skeleton has no Pulumi target"
    resolved = (generated / "resolved-blueprint.yaml").read_text()
    assert "provider: lab" in resolved


REFUSED = [
    (
        "an inference fleet",
        "inference-h100-single-region.yaml",
        ("provider: aws", "provider: lab"),
        "provider: lab",
        "placement.provider: expected one of 'aws', 'gcp' or 'azure', got 'lab'",
    ),
    (
        "Lustre over LNet",
        None,
        (
            "  containers: none\n",
            "  containers: none\nstorage:\n  - {name: scratch, kind: lustre, purpose: scratch,"
            " mount: /scratch, capacity_tib: 10, endpoint: '10.0.0.5@tcp:/scratch',"
            " lnet: 'tcp(eth0)'}\n",
        ),
        "storage:",
        "lnet is for on-prem Lustre; the lab Lustre service is reached over tcp",
    ),
    (
        "a Pulumi program to extend",
        None,
        ("  containers: none\n", "  containers: none\nextensions: {pulumi: team-pulumi}\n"),
        "extensions:",
        "extensions.pulumi: a lab cluster has no Pulumi program to extend",
    ),
]


@pytest.mark.parametrize(
    ("what", "source", "edit", "at", "message"), REFUSED, ids=[r[0] for r in REFUSED]
)
def test_the_skeleton_refuses_what_it_does_not_implement_at_the_line(
    tree: Path,
    what: str,
    source: str | None,
    edit: tuple[str, str],
    at: str,
    message: str,
) -> None:
    base = (tree / "blueprints" / source).read_text() if source else CLUSTER
    assert edit[0] in base
    text = base.replace(edit[0], edit[1], 1)
    (tree / "refused.yaml").write_text(text)
    (tree / "team-pulumi").mkdir(exist_ok=True)
    code, out = _cli(tree, "validate", "refused.yaml")
    assert code == 2, out
    assert "Traceback" not in out
    line = _line_of(text, at)
    located = re.search(rf"^refused\.yaml:{line}:\d+: error: (.*)$", out, re.MULTILINE)
    assert located is not None, f"{what}: no error at line {line}:\n{out}"
    assert message in located.group(1), out
