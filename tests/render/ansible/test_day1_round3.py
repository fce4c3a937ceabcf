"""Day-1 findings of the third practitioner review, each on archform's own generated tree.

Every test reads the tree archform generates for a bundled blueprint (blueprints/*.yaml) and
fails on the output of commit 670fc868. Expected values come from the vendors' sources named in
each test, not from archform's own output.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import PurePosixPath
from typing import Any

import pytest
from ruamel.yaml import YAML

import support
from archform.render.generate import build_files
from archform.spec import load_paths

# NHC 1.4.3 (https://github.com/mej/nhc/blob/1.4.3/nhc): nhcmain_init_env sets
# PATH="/sbin:/usr/sbin:/bin:/usr/bin" and, where /etc/debian_version exists,
# SYSCONFIGDIR=/etc/default and LIBEXECDIR=/usr/lib; nhcmain_load_sysconfig then sources
# $SYSCONFIGDIR/nhc; nhcmain_finalize_env sets HELPERDIR="${HELPERDIR:-$LIBEXECDIR/nhc}",
# OFFLINE_NODE=$HELPERDIR/node-mark-offline and, when NHC_RM is empty and
# `type -P scontrol` finds nothing, OFFLINE_NODE=: and MARK_OFFLINE=0 (the node is never drained).
NHC_START = 'PATH="/sbin:/usr/sbin:/bin:/usr/bin"; LIBEXECDIR=/usr/lib'
NHC_SYSCONFIG = "/etc/default/nhc"
# https://github.com/mej/nhc/blob/1.4.3/Makefile.am: helperdir = $(libexecdir)/nhc, holding
# node-mark-offline and node-mark-online.
NHC_HELPER_SUBDIR = "nhc"

NHC_TREES = [
    "aws-p5-efa-fsx",
    "gcp-a3-mega-tcpxo",
    "azure-nd-h100-v5",
    "onprem-h100-ib-lustre",
]


def _tree(stem: str) -> dict[str, str]:
    loaded = load_paths([support.BLUEPRINTS / f"{stem}.yaml"])
    return {f.path: f.content.decode("utf-8", "replace") for f in build_files(loaded)}


def _yaml(text: str) -> Any:
    """Ansible YAML: `!unsafe` (a literal string, never templated) read as the plain string."""
    reader = YAML(typ="safe", pure=True)
    reader.constructor.add_constructor(
        "!unsafe", lambda loader, node: loader.construct_scalar(node)
    )
    return reader.load(text)


def _tasks(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for task in _yaml(text) or []:
        out.append(task)
        out.extend(_tasks_in_block(task))
    return out


def _tasks_in_block(task: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for inner in task.get("block", []):
        out.append(inner)
        out.extend(_tasks_in_block(inner))
    return out


def _group_vars(files: dict[str, str]) -> dict[str, Any]:
    gv: dict[str, Any] = _yaml(files["ansible/group_vars/all.yml"])
    return gv


@pytest.mark.parametrize("stem", NHC_TREES)
def test_nhc_can_drain_the_node_it_runs_on(stem: str) -> None:
    """A failed NHC check must reach node-mark-offline and `scontrol` on the generated nodes.

    Emulates NHC 1.4.3's start-up on Ubuntu (the images of these trees) with the settings file
    the generated health role installs, and checks the result against where the same role's
    `make install` puts the helpers and where the slurm role puts scontrol.
    """
    files = _tree(stem)
    gv = _group_vars(files)
    assert gv["health_nhc"] is True
    tasks = _tasks(files["ansible/roles/health/tasks/main.yml"])

    build = next(t for t in tasks if "creates" in (t.get("ansible.builtin.shell") or {}))
    cmd = build["ansible.builtin.shell"]["cmd"]
    [libexecdir] = re.findall(r"--libexecdir=(\S+)", cmd)
    helperdir = str(PurePosixPath(libexecdir) / NHC_HELPER_SUBDIR)

    copies = [t["ansible.builtin.copy"] for t in tasks if "ansible.builtin.copy" in t]
    sysconfig = [c for c in copies if c.get("dest") == NHC_SYSCONFIG]
    assert sysconfig, f"{stem}: the health role installs no {NHC_SYSCONFIG}"
    text = files[f"ansible/roles/health/files/{sysconfig[0]['src']}"]

    script = (
        f"{NHC_START}\n{text}\n"
        'HELPERDIR="${HELPERDIR:-$LIBEXECDIR/nhc}"\n'
        'printf "%s\\n%s\\n%s\\n" "$HELPERDIR" "$NHC_RM" "$PATH"\n'
    )
    got = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={},
    ).stdout.splitlines()
    assert got[0] == helperdir, f"{stem}: NHC looks for node-mark-offline in {got[0]}"
    assert got[1] in ("slurm", ""), f"{stem}: NHC_RM={got[1]}"
    path = got[2].split(":")

    # Where scontrol is on the node: the slurm role's links for a built Slurm
    # (install_build.yml, dest /usr/local/<item> for item in slurm_build_links), the
    # distribution's /usr/bin otherwise.
    if gv["slurm_install_method"] == "build":
        links = _yaml(files["ansible/roles/slurm/defaults/main.yml"])
        [scontrol] = [x for x in links["slurm_build_links"] if x.endswith("/scontrol")]
        link_tasks = [
            t["ansible.builtin.file"]
            for t in _tasks(files["ansible/roles/slurm/tasks/install_build.yml"])
            if (t.get("ansible.builtin.file") or {}).get("state") == "link"
        ]
        [dest] = [t["dest"] for t in link_tasks if "{{ item }}" in t["dest"]]
        where = str(PurePosixPath(dest.replace("{{ item }}", scontrol)).parent)
    else:
        where = "/usr/bin"
    assert where in path, f"{stem}: scontrol is in {where}, NHC's PATH is {shlex.quote(got[2])}"


def _check_ps_service(line: str) -> tuple[str, str]:
    """(service, daemon) of an NHC `check_ps_service` line, as NHC 1.4.3 parses it.

    https://github.com/mej/nhc/blob/1.4.3/scripts/lbnl_ps.nhc: getopts ":0E:SVcd:e:fkm:rsu:v",
    SERVICE="$*" (the words after the options), DAEMON from -d or else the service name; -S runs
    `/sbin/service $SERVICE start`.
    """
    words = shlex.split(line.split("||", 1)[1])
    assert words[0] == "check_ps_service"
    with_arg = set("Edemu")
    daemon = ""
    i = 1
    while i < len(words) and words[i].startswith("-"):
        flags = words[i][1:]
        for j, flag in enumerate(flags):
            if flag in with_arg:
                value = flags[j + 1 :] or words[i + 1]
                i += 0 if flags[j + 1 :] else 1
                if flag == "d":
                    daemon = value
                break
        i += 1
    service = " ".join(words[i:])
    return service, daemon or service


@pytest.mark.parametrize("stem", NHC_TREES)
def test_nhc_restarts_munge_by_its_unit_name(stem: str) -> None:
    """NHC's -S must start the unit the munge role starts, and match the daemon's process.

    The unit comes from the generated munge role; the process is munged
    (https://github.com/dun/munge/blob/munge-0.5.15/src/munged/Makefile.am, sbin_PROGRAMS).
    """
    files = _tree(stem)
    [unit] = [
        t["ansible.builtin.systemd_service"]["name"]
        for t in _tasks(files["ansible/roles/munge/tasks/main.yml"])
        if "ansible.builtin.systemd_service" in t
    ]
    lines = [
        line
        for line in files["ansible/roles/health/files/nhc.conf"].splitlines()
        if "check_ps_service" in line and "munge" in line and not line.startswith("#")
    ]
    assert lines, f"{stem}: nhc.conf does not watch munged"
    for line in lines:
        assert _check_ps_service(line) == (unit, "munged"), line
