"""Day-1 findings of the fourth practitioner review: the seam between `pulumi up` and Ansible.

Each test reads the tree archform generates for a bundled cloud blueprint and fails on the
output of commit 3292190: the README's commands, run as written right after `pulumi up`, could
not log in to a single node. Expected values come from the vendors' documentation named in each
test, never from archform's own output.
"""

from __future__ import annotations

import configparser
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

import support
from archform.render.generate import build_files, generate
from archform.spec import load_paths

CLOUD_TREES = ["aws-p5-efa-fsx", "gcp-a3-mega-tcpxo", "azure-nd-h100-v5"]
ALL_TREES = [*CLOUD_TREES, "onprem-h100-ib-lustre", "onprem-cpu-smoke"]


def _tree(stem: str) -> dict[str, str]:
    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    return {f.path: f.content.decode("utf-8", "replace") for f in build_files(loaded)}


def _yaml(text: str) -> Any:
    reader = YAML(typ="safe", pure=True)
    reader.constructor.add_constructor(
        "!unsafe", lambda loader, node: loader.construct_scalar(node)
    )
    return reader.load(text)


def _bring_up(readme: str) -> list[list[str]]:
    """The commands of the README's "Bring the cluster up" block, as argument lists."""
    block = readme.split("## Bring the cluster up", 1)[1].split("```sh\n", 1)[1]
    lines = block.split("```", 1)[0].splitlines()
    return [shlex.split(line, comments=True) for line in lines if line.strip()]


def _outputs(ssh_user: str | None) -> dict[str, Any]:
    inventory: dict[str, Any] = {
        "controller": [{"name": "ctl", "address": "10.0.0.2"}],
        "login": [],
        "compute": [{"name": "gpu001", "address": "10.0.0.3", "group": "gpu"}],
        # The storage of aws-p5-efa-fsx (the inventory refuses outputs that lack one).
        "lustre": {
            name: {"dns_name": f"{name}.fsx.invalid", "mount_name": "abcdef"}
            for name in ("datasets", "checkpoints")
        },
        "nfs": {"home": {"address": "home.efs.invalid", "export": "/"}},
        "scale_sets": [],
    }
    if ssh_user is not None:
        inventory["ssh_user"] = ssh_user
    return {"ansible_inventory": inventory}


# --- Ansible logs in as the image's user, not the operator's local user name -----------------


def _inventory_hostvars(script: Path, outputs: Path, **env: str) -> dict[str, dict[str, Any]]:
    """ansible-inventory's view of each host: its variables with its groups' merged in."""
    support.require_tool("ansible-inventory")
    out = {}
    for host in ("ctl", "gpu001"):
        shown = subprocess.run(
            ["ansible-inventory", "-i", str(script), "--host", host],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "ARCHFORM_PULUMI_OUTPUTS": str(outputs), **env},
            check=False,
        )
        assert shown.returncode == 0, shown.stderr
        out[host] = json.loads(shown.stdout)
    return out


def _inventory_script(tmp_path: Path, stem: str) -> Path:
    """The generated tree's Ansible inventory script."""
    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    generate(loaded, tmp_path / "tree")
    return tmp_path / "tree" / "ansible" / "inventory" / "archform_inventory.py"


def test_inventory_sets_the_login_user_the_pulumi_outputs_name(tmp_path: Path) -> None:
    """Without ansible_user Ansible logs in as the local user name, which no cloud image has.

    Ansible's `remote_user` default is the current user (ansible-core DEFAULT_REMOTE_USER:
    "uses the default of the connection plugin", ssh's own default being the local user);
    EC2 Ubuntu AMIs authorise the key pair for `ubuntu` only
    (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/managing-users.html).
    """
    script = _inventory_script(tmp_path, "aws-p5-efa-fsx")
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(_outputs("ubuntu")))
    hosts = _inventory_hostvars(script, outputs)
    assert {h: v.get("ansible_user") for h, v in hosts.items()} == {
        "ctl": "ubuntu",
        "gpu001": "ubuntu",
    }
    # The operator can still log in as someone else.
    hosts = _inventory_hostvars(script, outputs, ARCHFORM_SSH_USER="ops")
    assert {v.get("ansible_user") for v in hosts.values()} == {"ops"}
    # No user in the outputs (an older stack): Ansible's own default, as before.
    outputs.write_text(json.dumps(_outputs(None)))
    hosts = _inventory_hostvars(script, outputs)
    assert all("ansible_user" not in v for v in hosts.values())


# What each cloud's program must export as the login user, from each vendor's documentation,
# with the config the test passes.
LOGIN_USERS = {
    # Canonical's and the DLAMI's Ubuntu AMIs: `ubuntu`
    # (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/managing-users.html).
    "aws-p5-efa-fsx": ("pulumi_aws", {}, "ubuntu"),
    # Azure creates the account named in osProfile.adminUsername with the SSH key
    # (https://learn.microsoft.com/en-us/azure/virtual-machines/linux/create-ssh-keys-detailed).
    "azure-nd-h100-v5": ("pulumi_azure_native", {"adminUsername": "hpcadmin"}, "hpcadmin"),
    # OS Login: the POSIX user name of the operator's Google identity
    # (https://cloud.google.com/compute/docs/oslogin/set-up-oslogin).
    "gcp-a3-mega-tcpxo": ("pulumi_gcp", {"sshUser": "ops_example_com"}, "ops_example_com"),
}


@pytest.mark.parametrize("stem", sorted(LOGIN_USERS))
def test_pulumi_program_exports_the_login_user(stem: str, tmp_path: Path) -> None:
    sdk, config, expected = LOGIN_USERS[stem]
    support.require_module("pulumi", sdk)
    from archform.verify.pulumi_mock import run_program
    from archform.verify.pulumi_projects import dry_run_config

    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    generate(loaded, tmp_path / "tree")
    defaults, _mocked = dry_run_config(tmp_path / "tree" / "pulumi")
    run = run_program(tmp_path / "tree" / "pulumi", {**defaults, **config})
    assert run.outputs["ansible_inventory"]["ssh_user"] == expected


def test_aws_readme_sets_the_key_pair_ansible_logs_in_with() -> None:
    """An instance launched without a key pair has no key for SSH at all.

    https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-key-pairs.html ("If you don't
    specify a key pair when you launch an instance, you can't connect to the instance" over
    SSH with a key); the generated Ansible connects over SSH only.
    """
    files = _tree("aws-p5-efa-fsx")
    steps = _bring_up(files["pulumi/README.md"])
    up = steps.index(["pulumi", "up"])
    assert ["pulumi", "config", "set", "keyName", "<value>"] in steps[:up]
    declared = _yaml(files["pulumi/Pulumi.yaml"])["config"]["keyName"]
    assert "default" not in declared, "an unset key pair must stop `pulumi up`"


def test_gcp_readme_names_the_os_login_steps() -> None:
    """OS Login: the key is added to the operator's profile and the VM's service account
    needs roles/iam.serviceAccountUser for the user
    (https://cloud.google.com/compute/docs/oslogin/set-up-oslogin)."""
    files = _tree("gcp-a3-mega-tcpxo")
    readme = files["pulumi/README.md"]
    steps = _bring_up(readme)
    up = steps.index(["pulumi", "up"])
    assert ["pulumi", "config", "set", "sshUser", "<value>"] in steps[:up]
    assert "gcloud compute os-login ssh-keys add" in readme
    assert "roles/iam.serviceAccountUser" in readme


@pytest.mark.parametrize("stem", CLOUD_TREES)
def test_ansible_readme_reads_the_outputs_from_the_pulumi_project(stem: str) -> None:
    """Its steps run in ansible/, which holds no Pulumi.yaml; `pulumi stack output` there stops
    with "no Pulumi project found in the current working directory" (pulumi/pulumi#1556). The
    global `-C, --cwd` flag runs pulumi "as if it had been started in another directory"
    (https://www.pulumi.com/docs/iac/cli/commands/pulumi/)."""
    files = _tree(stem)
    readme = files["ansible/README.md"]
    block = readme.split("## Run it", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    steps = [shlex.split(line, comments=True) for line in block.splitlines()]
    [output] = [s for s in steps if "output" in s and "stack" in s]
    assert output[0] == "pulumi"
    flags = output[1 : output.index("stack")]
    assert flags[:1] in (["-C"], ["--cwd"]), output
    project = Path("ansible") / flags[1]
    assert f"{os.path.normpath(project)}/Pulumi.yaml" in files
    assert output[-2:] == [">", "pulumi-outputs.json"]


# --- no interactive host-key prompt for brand-new nodes ------------------------------------


@pytest.mark.parametrize("stem", ALL_TREES)
def test_new_host_keys_do_not_prompt(stem: str) -> None:
    """With host key checking on and nothing else, ssh asks "Are you sure you want to continue
    connecting (yes/no)?" for every new node: "an interactive experience if using Ansible, from
    say, cron" (https://docs.ansible.com/ansible/latest/inventory_guide/connection_details.html).
    StrictHostKeyChecking=accept-new adds new keys and still refuses changed ones
    (ssh_config(5), https://man.openbsd.org/ssh_config#StrictHostKeyChecking).
    """
    cfg = configparser.ConfigParser(interpolation=None)
    cfg.read_string(_tree(stem)["ansible/ansible.cfg"])
    assert cfg.getboolean("defaults", "host_key_checking") is True
    args = shlex.split(cfg.get("ssh_connection", "ssh_args"))
    options = [args[i + 1] for i, a in enumerate(args) if a == "-o"]
    assert "StrictHostKeyChecking=accept-new" in options
    ssh = shutil.which("ssh")
    if ssh is not None:  # the local OpenSSH understands the options as written
        parsed = subprocess.run(
            [ssh, "-G", *args, "node.invalid"], capture_output=True, text=True, check=False
        )
        assert parsed.returncode == 0, parsed.stderr
        assert "stricthostkeychecking accept-new" in parsed.stdout.lower().splitlines()


# --- site.yml waits for the nodes `pulumi up` just started ---------------------------------


def _first_play_tasks(site: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    plays = _yaml(site)
    return plays[0], plays[0].get("tasks", [])


@pytest.mark.parametrize("stem", CLOUD_TREES)
def test_site_waits_for_ssh_and_cloud_init_first(stem: str) -> None:
    """`pulumi up` returns once EC2/GCE/Azure report the VM running, before sshd answers and
    before cloud-init has finished first boot; the first play must not gather facts (that is
    the SSH connection it waits for).

    ansible.builtin.wait_for_connection retries the connection until `timeout`
    (https://docs.ansible.com/ansible/latest/collections/ansible/builtin/wait_for_connection_module.html);
    `cloud-init status --wait` blocks until cloud-init is done, exit 0 or 2 (recoverable
    errors, cloud-init 23.4 and later), 1 on failure
    (https://cloudinit.readthedocs.io/en/latest/explanation/return_codes.html).
    """
    play, tasks = _first_play_tasks(_tree(stem)["ansible/site.yml"])
    assert play["hosts"] == "slurm_cluster"
    assert play.get("gather_facts") is False
    assert "ansible.builtin.wait_for_connection" in tasks[0]
    assert int(tasks[0]["ansible.builtin.wait_for_connection"]["timeout"]) >= 600
    waits = [t for t in tasks if t.get("ansible.builtin.command") == "cloud-init status --wait"]
    assert len(waits) == 1
    assert "rc not in [0, 2]" in waits[0]["failed_when"]


def test_onprem_site_has_no_cloud_wait() -> None:
    play, _ = _first_play_tasks(_tree("onprem-cpu-smoke")["ansible/site.yml"])
    assert play["name"] == "Base settings and MUNGE on every host"


def test_syntax_check_of_the_new_first_play(tmp_path: Path) -> None:
    support.require_tool("ansible-playbook")
    script = _inventory_script(tmp_path, "aws-p5-efa-fsx")
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(_outputs("ubuntu")))
    env = {**os.environ, "ARCHFORM_PULUMI_OUTPUTS": str(outputs)}
    env["ANSIBLE_COLLECTIONS_PATH"] = os.environ.get("ANSIBLE_COLLECTIONS_PATH", "")
    check = subprocess.run(
        ["ansible-playbook", "-i", str(script), "--syntax-check", "site.yml"],
        cwd=script.parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


# --- the first apt task does not race unattended-upgrades at first boot ---------------------


def _common_tasks(stem: str) -> list[dict[str, Any]]:
    tasks: list[dict[str, Any]] = _yaml(_tree(stem)["ansible/roles/common/tasks/main.yml"])
    return tasks


@pytest.mark.parametrize("stem", ALL_TREES)
def test_apt_daily_runs_are_stopped_and_awaited_before_the_first_apt_task(stem: str) -> None:
    """apt ships apt-daily.timer (apt-get update) and apt-daily-upgrade.timer (unattended-upgrade),
    both Persistent=true (apt debian/apt-daily.timer, debian/apt-daily-upgrade.timer), and the
    Ansible apt module waits only `lock_timeout` (60 s by default) for the dpkg lock
    (https://docs.ansible.com/ansible/latest/collections/ansible/builtin/apt_module.html).
    common is the first role of site.yml, so its first apt task is the playbook's first."""
    tasks = _common_tasks(stem)
    first_apt = next(i for i, t in enumerate(tasks) if "ansible.builtin.apt" in t)
    before = tasks[:first_apt]
    stops = [t for t in before if "ansible.builtin.systemd_service" in t]
    assert any(
        t["ansible.builtin.systemd_service"].get("state") == "stopped"
        and t["ansible.builtin.systemd_service"].get("enabled") is False
        for t in stops
    ), "apt's timers keep running"
    finds = [t for t in before if "ansible.builtin.stat" in t and "loop" in t]
    assert any(
        set(t["loop"]) == {"apt-daily.timer", "apt-daily-upgrade.timer"}
        and t["ansible.builtin.stat"]["path"].startswith("/usr/lib/systemd/system/")
        for t in finds
    ), "the apt timers are not looked up"
    waits = [
        str(t["ansible.builtin.command"]).split()
        for t in before
        if "systemd-run" in str(t.get("ansible.builtin.command", ""))
    ]
    assert waits, "nothing waits for an apt run already under way"
    argv = waits[0]
    assert "--wait" in argv and argv[-1] == "/bin/true"
    after = {a.split("=", 2)[2] for a in argv if a.startswith("--property=After=")}
    assert after == {"apt-daily.service", "apt-daily-upgrade.service"}


def test_timer_lookup_selects_the_units_that_exist(tmp_path: Path) -> None:
    """The stop task's loop, evaluated by Ansible itself on registered stat results."""
    support.require_tool("ansible")
    tasks = _common_tasks("aws-p5-efa-fsx")
    [stop] = [t for t in tasks if "apt's daily timers (they take" in t["name"]]
    results = [
        {"item": "apt-daily.timer", "stat": {"exists": True}},
        {"item": "apt-daily-upgrade.timer", "stat": {"exists": False}},
    ]
    extra = tmp_path / "vars.json"
    extra.write_text(json.dumps({"common_apt_timers": {"results": results}}))
    expression = stop["loop"].replace("}}", "| map(attribute='item') | list }}")
    command = ["ansible", "localhost", "-m", "ansible.builtin.debug", "-a", f"msg={expression}"]
    shown = subprocess.run(
        [*command, "-e", f"@{extra}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "ANSIBLE_LOCALHOST_WARNING": "False"},
    )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    result = json.loads(shown.stdout.split("=>", 1)[1])
    assert result["msg"] == ["apt-daily.timer"]


# --- the login user keeps a home (and Ansible its remote_tmp) once /home is shared ----------


def _run_home_tasks(tmp_path: Path, mounts: list[str]) -> str:
    """The nfs_client role from its home task on, in check mode on this machine, for `nobody`
    (whose home, /nonexistent, does not exist), as ansible-playbook reports it."""
    support.require_tool("ansible-playbook")
    tree = tmp_path / "tree"
    loaded = load_paths([support.BLUEPRINTS / "aws-p5-efa-fsx.yaml"])
    generate(loaded, tree)
    play = tmp_path / "play.yml"
    play.write_text("- hosts: localhost\n  gather_facts: true\n  roles:\n    - nfs_client\n")
    extra = tmp_path / "vars.json"
    extra.write_text(
        json.dumps(
            {
                "nfs_client_user": "nobody",
                "nfs_mounts": [{"name": "home", "path": p} for p in mounts],
            }
        )
    )
    from archform.verify.checks.ansible import collections_path

    collections = collections_path()
    if collections is None:
        support.require_tool("vendored-ansible-collections(scripts/vendor-collections.sh)")
    command = ["ansible-playbook", "-i", "localhost,", "-c", "local", "--check", str(play)]
    command += ["-e", f"@{extra}", "-e", f"ansible_python_interpreter={sys.executable}"]
    ran = subprocess.run(
        [*command, "--start-at-task", "Name the user Ansible logs in as"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={
            **os.environ,
            "ANSIBLE_ROLES_PATH": str(tree / "ansible" / "roles"),
            "ANSIBLE_COLLECTIONS_PATH": str(collections),
            "ANSIBLE_LOCALHOST_WARNING": "False",
        },
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return ran.stdout


def test_login_user_gets_a_home_on_the_shared_file_system(tmp_path: Path) -> None:
    """Ansible's remote_tmp default is ~/.ansible/tmp, made with `mkdir -p` as the login user
    (ansible-core plugins/shell/__init__.py, mkdtemp); on a fresh EFS, Filestore or Azure Files
    share mounted on /home only root can write the root directory
    (https://docs.aws.amazon.com/efs/latest/ug/accessing-fs-nfs-permissions.html), so the user's
    home must be made there, owned by the user."""
    support.require_tool("getent")
    out = _run_home_tasks(tmp_path, ["/"])  # /nonexistent lies under the mount "/"
    assert "changed: [localhost]" in _home_task_report(out), out
    out = _run_home_tasks(tmp_path / "outside", ["/srv"])  # a home outside every mount
    section = _home_task_report(out)
    assert "changed" not in section and "skipping" in section, out


def _home_task_report(out: str) -> str:
    """ansible-playbook's lines for the home task (up to the next task or the recap)."""
    section = out.split("TASK [nfs_client : Give the login user its home", 1)[1]
    return section.split("TASK [", 1)[0].split("PLAY RECAP", 1)[0]


def test_home_task_runs_right_after_the_mount() -> None:
    """Nothing between the mount and the home task may copy a file to the host."""
    tasks = _yaml(_tree("aws-p5-efa-fsx")["ansible/roles/nfs_client/tasks/main.yml"])
    names = [t["name"] for t in tasks]
    mount = next(i for i, t in enumerate(tasks) if "ansible.posix.mount" in t)
    home = names.index("Give the login user its home on the shared file system")
    between = tasks[mount + 1 : home]
    transfers = ("ansible.builtin.copy", "ansible.builtin.template", "ansible.builtin.unarchive")
    assert not [t["name"] for t in between if any(k in t for k in transfers)]
    task = tasks[home]["ansible.builtin.file"]
    assert task["state"] == "directory" and task["mode"] == "0700"
