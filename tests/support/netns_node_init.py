"""PID 1 of one emulated cluster node (tests/support/netns.py starts it).

Runs inside fresh network, UTS, mount, PID and cgroup namespaces (the network namespace is
one `ip netns add` made). It gives the node what a separate machine has and a shared root
file system does not: its own host name; /etc and apt's lists and cache as overlays whose
writes stay with the node; /run; /sys (this namespace's network devices); cgroup hierarchies
rooted at the node's own cgroup; empty Slurm/MUNGE state and log folders; /tmp. Then it starts
sshd on the node's address and reaps orphans until it is killed (killing PID 1 ends every
process of the node).

usage: netns_node_init.py CONFIG.json   (keys: hostname, state, cgroups,
overlays, private, logs)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

# Where the node sees its folder of the test's tmp_path (sshd config, keys) once /tmp is its own.
NODE_DIR = "/run/archform-node"


def mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def own_like(path: Path, template: os.stat_result) -> None:
    os.chown(path, template.st_uid, template.st_gid)
    path.chmod(template.st_mode & 0o7777)


def cgroups(hierarchies: list[list[str]]) -> None:
    """Mount the machine's cgroup hierarchies again: in this cgroup namespace their root is
    the node's own cgroup, so Slurm's job cgroups of two nodes never meet."""
    mount("-t", "tmpfs", "-o", "mode=755", "cgroup_root", "/sys/fs/cgroup")
    for kind, name, options in hierarchies:
        target = f"/sys/fs/cgroup/{name}"
        Path(target).mkdir(parents=True, exist_ok=True)
        if kind == "cgroup2":
            mount("-t", "cgroup2", "cgroup2", target)
        else:
            mount("-t", "cgroup", "-o", options, "cgroup", target)


def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    state = Path(config["state"])
    socket.sethostname(config["hostname"])
    mount("--make-rprivate", "/")
    # /sys of this network namespace (/sys/class/net), then the node's cgroup view.
    mount("-t", "sysfs", "sysfs", "/sys")
    cgroups(config["cgroups"])
    mount("-t", "tmpfs", "-o", "mode=755", "node_run", "/run")
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    for name, layer in config["overlays"].items():  # the machine's content, the node's writes
        layers = f"lowerdir={name},upperdir={layer}/upper,workdir={layer}/work"
        mount("-t", "overlay", "overlay", "-o", layers, name)
    for name in config["private"]:  # empty per-node state, owned like the machine's folder
        path = Path(name)
        template = path.stat()
        mount("-t", "tmpfs", "-o", "mode=755", "node_state", name)
        own_like(path, template)
    for name, source in config["logs"].items():  # logs the test reads after a failure
        path = Path(name)
        template = path.stat()
        mount("--bind", source, name)
        own_like(path, template)
    # A private /tmp (Slurm's PMIx plugin makes /tmp/spmix_appdir_<uid>_<job>.<step> on every
    # node of a step). The node's own files live under the machine's /tmp: keep them
    # reachable at NODE_DIR first.
    Path(NODE_DIR).mkdir()
    mount("--bind", str(state), NODE_DIR)
    mount("-t", "tmpfs", "-o", "mode=1777", "node_tmp", "/tmp")
    subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", f"{NODE_DIR}/sshd_config"])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:  # PID 1 adopts every daemon that double-forks: reap them
        try:
            os.wait()
        except ChildProcessError:
            time.sleep(1)


if __name__ == "__main__":
    main()
