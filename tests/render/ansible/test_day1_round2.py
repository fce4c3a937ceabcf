"""Day-1 findings of the second practitioner review, each on archform's own generated tree.

Every test here reads the tree archform generates for a bundled blueprint (blueprints/*.yaml)
and fails on the output of commit b0c054e. Expected values come from the vendors' sources named
in each test, not from archform's own output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
    """Ansible YAML: `!unsafe` (a literal string, never templated) read as the plain string."""
    reader = YAML(typ="safe", pure=True)
    reader.constructor.add_constructor(
        "!unsafe", lambda loader, node: loader.construct_scalar(node)
    )
    return reader.load(text)


# --- GCP a3-mega: Cluster Toolkit's long prolog timeouts --------------------------------------


def test_tcpxo_slurm_conf_has_cluster_toolkits_long_prolog_timeouts() -> None:
    # cluster-toolkit@1047080 long-prolog-slurm.conf.tpl (the a3mega blueprint's slurm_conf_tpl):
    # BatchStartTimeout=600, PrologEpilogTimeout=600 (and MessageTimeout=600, which Slurm's
    # read_config.c flags above 100: "MessageTimeout is too high for effective fault-tolerance").
    conf = _conf(_tree("gcp-a3-mega-tcpxo")["ansible/roles/slurm/files/slurm.conf"])
    assert (conf.get("MessageTimeout"), conf.get("BatchStartTimeout")) == ("100", "600")
    assert conf.get("PrologEpilogTimeout") == "600"  # the blueprint declares Slurm 24.11


@pytest.mark.integration
def test_tcpxo_slurm_files_come_up_clean_in_the_releases_slurmctld(tmp_path: Path) -> None:
    """The real slurmctld (and slurmd -G) of the declared release read the timeouts without an
    error line (read_config.c flags MessageTimeout above 100)."""
    from archform.render.writer import write_tree
    from archform.verify.checks import slurm

    support.require_tool("slurmctld", "scontrol")
    write_tree(tmp_path, build_files(load_paths([support.BLUEPRINTS / "gcp-a3-mega-tcpxo.yaml"])))
    results = slurm.CHECK.run(tmp_path.resolve())
    assert results and all(r.status == "passed" for r in results), [
        f"{r.artifact}: {r.detail}" for r in results if r.status != "passed"
    ]


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


# --- GCP a3-mega: the FasTrak NCCL plugin is installed by the fabric role ---------------------


def _tcpxo_tasks() -> list[dict[str, Any]]:
    files = _tree("gcp-a3-mega-tcpxo")
    [block] = _yaml(files["ansible/roles/fabric/tasks/gpudirect_tcpxo.yml"])
    tasks: list[dict[str, Any]] = block["block"]
    return tasks


def test_tcpxo_plugin_is_installed_by_the_fabric_role_before_it_is_required() -> None:
    """The plugin container's installer (`install --install-nccl`, as the GKE nccl-tcpxo-installer
    DaemonSet and slurm-gcp's receive-data-path-manager-mega run it) writes
    /var/lib/tcpxo/lib64/nccl-env-profile.sh; the role must run it before asserting the file."""
    tasks = _tcpxo_tasks()
    names = [t["name"] for t in tasks]
    install = next(
        i
        for i, t in enumerate(tasks)
        if "install" in (t.get("ansible.builtin.command") or {}).get("argv", [])
    )
    argv = tasks[install]["ansible.builtin.command"]["argv"]
    assert argv[:2] == ["docker", "run"] and argv[-2:] == ["install", "--install-nccl"]
    assert "/var/lib:/var/lib" in argv  # the installer writes below the host's /var/lib
    stat = next(i for i, t in enumerate(tasks) if "ansible.builtin.stat" in t)
    assert install < stat, names
    docker = next(
        i for i, t in enumerate(tasks) if "docker.io" in str(t.get("ansible.builtin.apt"))
    )
    assert docker < install, names


def test_rxdm_hook_runs_the_images_the_fabric_role_installed(tmp_path: Path) -> None:
    """The prolog hook takes its image names from the file the role writes (one source, the
    role's vars), refreshes the plugin and waits for RxDM's readiness line."""

    files = _tree("gcp-a3-mega-tcpxo")
    fabric_vars = _yaml(files["ansible/roles/fabric/vars/main.yml"])
    # slurm-gcp@13fd92b receive-data-path-manager-mega: plugin v1.0.17, RxDM v1.0.23.
    plugin = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.17"
    rxdm = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.23"
    assert (fabric_vars["fabric_tcpxo_plugin_image"], fabric_vars["fabric_tcpxo_rxdm_image"]) == (
        plugin,
        rxdm,
    )
    [env_task] = [
        t
        for t in _tcpxo_tasks()
        if t.get("ansible.builtin.copy", {}).get("dest") == "/etc/default/archform-tcpxo"
    ]
    content = env_task["ansible.builtin.copy"]["content"]
    env_file = tmp_path / "archform-tcpxo"
    env_file.write_text(
        content.replace("{{ fabric_tcpxo_plugin_image }}", plugin).replace(
            "{{ fabric_tcpxo_rxdm_image }}", rxdm
        )
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "docker.log"
    (bin_dir / "docker").write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {log}\n'
        'case "$*" in *"container logs"*) echo "Buffer manager initialization complete";; esac\n'
    )
    (bin_dir / "modprobe").write_text("#!/bin/sh\nexit 0\n")
    for tool in ("docker", "modprobe"):
        (bin_dir / tool).chmod(0o755)
    hook = tmp_path / "rxdm-hook.sh"
    hook.write_text(files["ansible/roles/fabric/files/rxdm-hook.sh"])
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "ARCHFORM_TCPXO_ENV": str(env_file),
        "SLURM_JOB_NUM_NODES": "2",
        "SLURM_JOB_ID": "7",
    }
    run = subprocess.run(["bash", str(hook), "prolog"], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    calls = log.read_text().splitlines()
    assert any(
        c.startswith("run --rm") and plugin in c and "install --install-nccl" in c for c in calls
    ), calls
    assert any(c.startswith("run --detach") and rxdm in c for c in calls), calls


# --- AWS: EFA detected by the installer's own record, held to a minimum version --------------

MARKER = "/opt/amazon/efa_installed_packages"


def _efa_check(tmp_path: Path, marker: str | None) -> subprocess.CompletedProcess[str]:
    """The generated efa_version.yml and the role's version assert, run by ansible-playbook on
    localhost with the record at a temporary path (the one substitution)."""
    support.require_tool("ansible-playbook")
    files = _tree("aws-p5-efa-fsx")
    record = tmp_path / "efa_installed_packages"
    if marker is not None:
        record.write_text(marker)
    (tmp_path / "efa_version.yml").write_text(
        files["ansible/roles/fabric/tasks/efa_version.yml"].replace(MARKER, str(record))
    )
    [block] = _yaml(files["ansible/roles/fabric/tasks/efa.yml"])
    [require] = [
        t for t in block["block"] if "ansible.builtin.assert" in t and "fabric_efa_found" in str(t)
    ]
    group_vars = _yaml(files["ansible/group_vars/all.yml"])
    play = [
        {
            "hosts": "localhost",
            "gather_facts": False,
            "vars": {
                k: group_vars[k]
                for k in ("image_efa_installer", "efa_installer_version", "archform_image")
            },
            "tasks": [
                {"ansible.builtin.include_tasks": "efa_version.yml"},
                {
                    "ansible.builtin.set_fact": {
                        "fabric_efa_minimum": "{{ image_efa_installer or efa_installer_version }}"
                    }
                },
                require,
            ],
        }
    ]
    (tmp_path / "play.yml").write_text(json.dumps(play))
    return subprocess.run(
        [
            "ansible-playbook",
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            "play.yml",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1"},
    )


def test_efa_stack_is_detected_by_the_installers_record_not_a_doc_folder() -> None:
    files = _tree("aws-p5-efa-fsx")
    tasks = (
        files["ansible/roles/fabric/tasks/efa.yml"]
        + files["ansible/roles/fabric/tasks/efa_version.yml"]
    )
    assert "/opt/amazon/efa/share/doc" not in tasks  # the installer writes no such folder
    assert MARKER in files["ansible/roles/fabric/tasks/efa_version.yml"]
    # The DLAMI stays on its `latest` alias; the role holds the image table's version as a floor.
    assert "/latest/ami-id" in files["pulumi/settings.py"]
    assert "fabric_efa_found is version(fabric_efa_minimum, '>=')" in tasks


@pytest.mark.parametrize(
    ("record", "passes"),
    [
        # The first lines efa_installer.sh writes (awsome-distributed-training efa-versions.py
        # parses "# EFA installer version: (\d+\.\d+\.\d+)" from this file).
        ("# EFA installer version: 1.50.0\n# Debug packages installed: no\n", True),
        ("# EFA installer version: 1.51.2\n# Debug packages installed: no\n", True),  # next AMI
        ("# EFA installer version: 1.47.0\n# Debug packages installed: no\n", False),
        ("efa-config\nefa-profile\n", False),
        (None, False),
    ],
    ids=["image-release", "next-release", "older", "no-version-line", "no-record"],
)
def test_efa_minimum_version_accepts_later_dlami_releases(
    tmp_path: Path, record: str | None, passes: bool
) -> None:
    run = _efa_check(tmp_path, record)
    assert (run.returncode == 0) is passes, run.stdout[-3000:]
    if not passes:
        assert "needs 1.50.0 or newer" in run.stdout, run.stdout[-3000:]


# --- On-prem: the LNet network and interface come from the blueprint ------------------------

ONPREM = (support.BLUEPRINTS / "onprem-h100-ib-lustre.yaml").read_text()
DATASETS_ENDPOINT = "    endpoint: 10.10.0.10@o2ib:/pretrain\n"
CKPT_ENDPOINT = "    endpoint: 10.10.0.10@o2ib:/ckpt\n"


def _with_lnet(first: str, second: str | None = None) -> str:
    text = ONPREM.replace(DATASETS_ENDPOINT, DATASETS_ENDPOINT + f"    lnet: {first}\n")
    if second is not None:
        text = text.replace(CKPT_ENDPOINT, CKPT_ENDPOINT + f"    lnet: {second}\n")
    assert text != ONPREM
    return text


def _problems(text: str) -> list[tuple[int, str, str]]:
    from archform.spec import SpecError

    with pytest.raises(SpecError) as info:
        load_text(text, "onprem-h100-ib-lustre.yaml")
    return [(p.line, p.message, p.hint) for p in info.value.problems]


def _line_of(text: str, needle: str, nth: int = 1) -> int:
    lines = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    return lines[nth - 1]


def test_lnet_interface_comes_from_the_blueprint() -> None:
    # A DGX-style node whose storage port is not ib0 (Ubuntu names IPoIB ports ibp<bus>s<slot>).
    text = _with_lnet("o2ib(ibp24s0)", "o2ib(ibp24s0)")
    files = {f.path: f.content.decode() for f in build_files(load_text(text, "bp.yaml"))}
    group_vars = _yaml(files["ansible/group_vars/all.yml"])
    assert group_vars["lustre_lnet_networks"] == "o2ib(ibp24s0)"
    # The role writes it into lnet's module options (no ib0 anywhere).
    role = files["ansible/roles/lustre_client/tasks/main.yml"]
    assert "options lnet networks={{ lustre_lnet_networks }}" in role
    assert "ib0" not in role
    # Unset, the documented default stays: o2ib on the InfiniBand fabric's ib0.
    default = _yaml(_tree("onprem-h100-ib-lustre")["ansible/group_vars/all.yml"])
    assert default["lustre_lnet_networks"] == "o2ib(ib0)"


@pytest.mark.parametrize("stem", ["aws-p5-efa-fsx", "azure-nd-h100-v5", "gcp-a3-mega-tcpxo"])
def test_a_cloud_lustre_client_keeps_its_own_lnet_configuration(stem: str) -> None:
    """LNet is bound only where Lustre is reached over LNet addresses (the provider's fact).

    The bind task runs when the group variable names networks, never on a provider's name;
    a cloud's managed Lustre (FSx, AMLFS, Managed Lustre) gets no lustre-lnet.conf.
    """
    files = _tree(stem)
    group_vars = _yaml(files["ansible/group_vars/all.yml"])
    assert group_vars["lustre_mounts"], "the bundled cluster mounts Lustre"
    assert group_vars["lustre_lnet_networks"] == ""
    role = files["ansible/roles/lustre_client/tasks/main.yml"]
    bind = role.split("- name: Bind LNet", 1)[1].split("\n- name:", 1)[0]
    assert "when: lustre_lnet_networks | length > 0" in bind
    assert "archform_provider" not in role


@pytest.mark.parametrize(
    ("first", "second", "needle", "nth", "message"),
    [
        ("o2ib(ib 0)", None, "lnet: o2ib(ib 0)", 1, "storage[0].lnet"),
        # The server's NID (10.10.0.10@o2ib) is on o2ib: a tcp client network cannot reach it.
        ("tcp(bond0)", None, "lnet: tcp(bond0)", 1, "NID is on LNet network 'o2ib0'"),
        # One networks= entry per LNet network: o2ib0 over two different ports is refused.
        ("o2ib(ibp24s0)", "o2ib0(ibp25s0)", "storage:", 1, "names network o2ib0 with other"),
    ],
    ids=["bad-syntax", "nid-mismatch", "two-interfaces-one-network"],
)
def test_bad_lnet_is_a_located_error(
    first: str, second: str | None, needle: str, nth: int, message: str
) -> None:
    text = _with_lnet(first, second)
    found = _problems(text)
    assert len(found) == 1, found
    line, text_of, hint = found[0]
    assert message in text_of and hint, found
    assert line == _line_of(text, needle, nth), found


def test_lnet_is_refused_outside_on_prem_lustre() -> None:
    text = ONPREM.replace(
        "    endpoint: nfs01:/export/home\n",
        "    endpoint: nfs01:/export/home\n    lnet: tcp(bond0)\n",
    )
    [(line, message, _hint)] = _problems(text)
    assert "only Lustre has an LNet network" in message
    assert line == _line_of(text, "lnet: tcp(bond0)")
    cloud = (support.BLUEPRINTS / "aws-p5-efa-fsx.yaml").read_text()
    first_lustre = cloud.index("kind: lustre")
    cloud = cloud[:first_lustre] + "lnet: tcp(eth0)\n    " + cloud[first_lustre:]
    [(_line, message, _hint)] = _problems(cloud)
    assert "lnet is for on-prem Lustre" in message


# --- Azure: /etc/hosts rows carry addresses; the inventory follows the scale set -------------


def _azure_outputs(tree: Path) -> dict[str, Any]:
    """The generated Azure Pulumi program under mocks (real pulumi-azure-native SDK)."""
    support.require_module("pulumi", "pulumi_azure_native")
    from archform.verify.pulumi_mock import run_program
    from archform.verify.pulumi_projects import dry_run_config

    config, _mocked = dry_run_config(tree / "pulumi")
    outputs: dict[str, Any] = run_program(tree / "pulumi", config).outputs
    return outputs


def _inventory(project: Path, env: dict[str, str]) -> dict[str, Any]:
    script = project / "inventory" / "archform_inventory.py"
    run = subprocess.run(
        [sys.executable, str(script), "--list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    listed: dict[str, Any] = json.loads(run.stdout)
    return listed


@pytest.mark.integration
def test_azure_inventory_follows_the_scale_set_and_hosts_rows_are_addresses(
    tmp_path: Path,
) -> None:
    import ipaddress

    from archform.render.writer import write_tree
    from support import az_standin

    support.require_tool("ansible-playbook")
    loaded = load_paths([support.BLUEPRINTS / "azure-nd-h100-v5.yaml"])
    write_tree(tmp_path / "tree", build_files(loaded))
    project = tmp_path / "tree" / "ansible"
    outputs = _azure_outputs(tmp_path / "tree")
    inventory = outputs["ansible_inventory"]
    [scale_set] = inventory["scale_sets"]
    view = training_view(_cluster("azure-nd-h100-v5"))
    assert scale_set["hostnames"] == view.all_hostnames
    # No predicted per-VM DNS names: the scale set decides names and addresses.
    assert all(host["address"] is None for host in inventory["compute"])
    (project / "pulumi-outputs.json").write_text(json.dumps(outputs))

    # A new Uniform scale set numbers its instances 0..n-1 (overprovisioning is off).
    table = tmp_path / "instances.json"
    instances = {str(i): f"10.42.0.{100 + i}" for i in range(len(view.all_hostnames))}
    table.write_text(json.dumps({scale_set["name"]: instances}))
    az_standin.install(tmp_path / "bin", table)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    first = _inventory(project, env)["_meta"]["hostvars"]
    assert first["azure-ndv5-train-gpu004"]["ansible_host"] == "10.42.0.103"

    # Azure replaces instance 3 (repair, or delete + scale out): instance 16, a new address.
    del instances["3"]
    instances["16"] = "10.42.0.77"
    table.write_text(json.dumps({scale_set["name"]: instances}))
    after = _inventory(project, env)["_meta"]["hostvars"]
    assert after["azure-ndv5-train-gpu004"]["ansible_host"] == "10.42.0.77"
    # Every other node keeps its name and address (no shift of Slurm node names).
    same = [h for h in view.all_hostnames if h != "azure-ndv5-train-gpu004"]
    assert all(after[h] == first[h] for h in same)

    # The common role's /etc/hosts tasks, run by ansible-playbook on this inventory: one row
    # per host, the address first (hosts(5)).
    hosts_file = tmp_path / "hosts"
    hosts_file.write_text("127.0.0.1 localhost\n")
    tasks = _yaml((project / "roles/common/tasks/main.yml").read_text())
    wanted = [
        t
        for t in tasks
        if "/etc/hosts" in str(t.get("name", ""))
        or "IP address for every cluster host" in str(t.get("name", ""))
    ]
    for task in wanted:
        module = task.get("ansible.builtin.blockinfile")
        if module:
            module["path"] = str(hosts_file)
            module.pop("owner", None), module.pop("group", None)
    play = [
        {
            "hosts": "localhost",
            "connection": "local",
            "gather_facts": False,
            "vars": {"archform_set_hostname": True},
            "tasks": wanted,
        }
    ]
    (project / "hosts-play.yml").write_text(json.dumps(play))
    run = subprocess.run(
        [
            "ansible-playbook",
            "-i",
            "inventory/archform_inventory.py",
            "-i",
            "localhost,",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            "hosts-play.yml",
        ],
        cwd=project,
        env={**env, "ANSIBLE_NOCOLOR": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:]
    rows = [
        line.split()
        for line in hosts_file.read_text().splitlines()
        if line and not line.startswith("#")
    ]
    names = {row[1]: row[0] for row in rows[1:]}
    assert set(view.all_hostnames) <= set(names)
    for address in names.values():
        ipaddress.ip_address(address)  # raises on a DNS name
    assert names["azure-ndv5-train-gpu004"] == "10.42.0.77"
