"""A cluster of emulated nodes on this machine: one network namespace per node (`ip netns`),
veth pairs to a bridge, private addresses, sshd on each node's address.

What a separate machine has and one shared root file system does not is given to each node
by tests/support/netns_node_init.py (its PID 1): host name, /etc (overlay), /run, /sys,
cgroups, /tmp, Slurm/MUNGE state and logs. /usr, /var/lib/dpkg and /root are shared: the
nodes run one installed software set, like nodes booted from one image.

Nothing here touches the machine's /etc: names resolve through what the generated playbooks
write into each node's own /etc/hosts. Everything is torn down by `stop()` (idempotent; the
fixture calls it in a finalizer): node processes (killing a node's PID 1 ends its PID
namespace), namespaces, bridge and the node cgroups.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

INIT = Path(__file__).with_name("netns_node_init.py")
NODE_DIR = "/run/archform-node"  # the node's folder seen from inside (netns_node_init.py)
CGROUP_ROOT = Path("/sys/fs/cgroup")
# Folders each node gets empty and private (a fresh machine's state), and the log folders it
# gets as a bind of a folder under the test's tmp_path (readable after a failure).
PRIVATE = ("/var/spool/slurmd", "/var/spool/slurmctld", "/var/lib/munge")
# Folders each node sees as the machine's but writes privately: its own /etc (host name,
# /etc/hosts, /etc/default/slurmd, munge key) and apt's lists, cache and their locks.
OVERLAYS = ("/etc", "/var/lib/apt/lists", "/var/cache/apt")
LOGS = ("/var/log/slurm", "/var/log/munge")
SSHD_CONFIG = """\
ListenAddress {address}
HostKey {host_key}
AuthorizedKeysFile {authorized_keys}
PidFile /run/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
"""


@dataclass
class Node:
    """One emulated machine."""

    name: str
    address: str
    state: Path
    launcher: subprocess.Popen[bytes] | None = None
    cgroups: list[Path] = field(default_factory=list)

    @property
    def netns(self) -> str:
        return self.name[:15]

    def init_pid(self) -> int:
        """Host PID of the node's PID 1 (the launcher's only child)."""
        assert self.launcher is not None
        children = Path(f"/proc/{self.launcher.pid}/task/{self.launcher.pid}/children")
        found = children.read_text().split()
        if not found:
            raise RuntimeError(f"node {self.name}: its init is not running")
        return int(found[0])


def _run(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=60)


def _hierarchies() -> list[tuple[str, str, str, Path]]:
    """(fstype, name under /sys/fs/cgroup, mount options, this process's cgroup folder)."""
    mine: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        mine[controllers] = path
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, right = line.split(" - ", 1)
        fstype, _, superopts = right.split(" ")[:3]
        root, mountpoint = left.split(" ")[3:5]
        if fstype not in ("cgroup", "cgroup2") or not mountpoint.startswith(str(CGROUP_ROOT)):
            continue
        opts = [o for o in superopts.split(",") if o not in ("rw", "ro")]
        if fstype == "cgroup2":
            key, options = "", ""
        else:
            key = ",".join(o for o in opts if o != "xattr")
            options = (
                ",".join(opts)
                if any(not o.startswith("name=") for o in opts)
                else (",".join(["none", *opts]))
            )
        if key not in mine:
            continue
        relative = os.path.relpath(mine[key], root)
        folder = Path(mountpoint) / ("" if relative == "." else relative.lstrip("/"))
        name = os.path.relpath(mountpoint, CGROUP_ROOT)
        found.append((fstype, "" if name == "." else name, options, folder))
    return found


class NetnsCluster:
    """Nodes `names` on bridge `bridge` with addresses `subnet`.N (N from 10)."""

    def __init__(self, workdir: Path, names: list[str], subnet: str = "10.213.0") -> None:
        self.workdir = workdir
        self.bridge = "afbr0"
        self.gateway = f"{subnet}.1"
        self.nodes = [
            Node(name, f"{subnet}.{10 + i}", workdir / "nodes" / name)
            for i, name in enumerate(names)
        ]
        self.key = workdir / "ssh" / "id_ed25519"
        self.known_hosts = workdir / "ssh" / "known_hosts"

    # --- life cycle ---------------------------------------------------------------------
    def start(self) -> None:
        self.stop()  # a previous run killed before its finalizer ran
        ssh = self.key.parent
        ssh.mkdir(parents=True, exist_ok=True)
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", str(self.key))
        _run("ip", "link", "add", self.bridge, "type", "bridge")
        _run("ip", "addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _run("ip", "link", "set", self.bridge, "up")
        known = []
        for node in self.nodes:
            known.append(f"{node.address} {self._prepare(node)}")
        self.known_hosts.write_text("\n".join(known) + "\n")
        for node in self.nodes:
            self._launch(node)
        for node in self.nodes:
            self._wait_for_sshd(node)

    def _prepare(self, node: Node) -> str:
        """Network namespace, veth, state folders, sshd config; the host public key."""
        state = node.state
        overlays = {p: state / f"overlay{p.replace('/', '-')}" for p in OVERLAYS}
        for layer in overlays.values():
            (layer / "upper").mkdir(parents=True, exist_ok=True)
            (layer / "work").mkdir(exist_ok=True)
        # What a Debian install writes for a machine (its own name on 127.0.1.1) and no DNS
        # server: the bridge has no route out, so a lookup must fail fast, not time out.
        etc = overlays["/etc"] / "upper"
        (etc / "hosts").write_text(
            f"127.0.0.1\tlocalhost\n127.0.1.1\t{node.name}\n::1\tlocalhost ip6-localhost\n"
        )
        (etc / "resolv.conf").write_text("# no name server on the test bridge\n")
        for path in LOGS:
            (state / f"log{path.replace('/', '-')}").mkdir(parents=True, exist_ok=True)
        host_key = state / "ssh_host_ed25519_key"
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", node.name, "-f", str(host_key))
        authorized = state / "authorized_keys"
        shutil.copyfile(self.key.with_suffix(".pub"), authorized)
        (state / "sshd_config").write_text(
            SSHD_CONFIG.format(
                address=node.address,
                host_key=f"{NODE_DIR}/{host_key.name}",
                authorized_keys=f"{NODE_DIR}/{authorized.name}",
            )
        )
        host_end, node_end = f"{node.netns}-h"[:15], f"{node.netns}-n"[:15]
        _run("ip", "netns", "add", node.netns)
        _run("ip", "link", "add", host_end, "type", "veth", "peer", "name", node_end)
        _run("ip", "link", "set", host_end, "master", self.bridge, "up")
        _run("ip", "link", "set", node_end, "netns", node.netns)
        inside = ("ip", "netns", "exec", node.netns, "ip")
        _run(*inside, "link", "set", node_end, "name", "eth0")
        _run(*inside, "addr", "add", f"{node.address}/24", "dev", "eth0")
        _run(*inside, "link", "set", "eth0", "up")
        _run(*inside, "link", "set", "lo", "up")
        _run(*inside, "route", "add", "default", "via", self.gateway)
        cgroups: list[list[str]] = []
        config = {
            "hostname": node.name,
            "state": str(state),
            "cgroups": cgroups,
            "overlays": {p: str(layer) for p, layer in overlays.items()},
            "private": [p for p in PRIVATE if Path(p).is_dir()],
            "logs": {p: str(state / f"log{p.replace('/', '-')}") for p in LOGS if Path(p).is_dir()},
        }
        for fstype, name, options, folder in _hierarchies():
            own = folder / f"archform-{node.name}"
            own.mkdir(exist_ok=True)
            for knob in ("cpuset.cpus", "cpuset.mems"):  # a new cpuset starts empty
                if (folder / knob).exists():
                    (own / knob).write_text((folder / knob).read_text())
            node.cgroups.append(own)
            cgroups.append([fstype, name, options])
        (state / "init.json").write_text(json.dumps(config, indent=1))
        return " ".join(host_key.with_suffix(".pub").read_text().split()[:2])

    def _launch(self, node: Node) -> None:
        procs = [str(c / "cgroup.procs") for c in node.cgroups]
        script = (
            'for f in "$@"; do echo $$ > "$f"; done; exec nsenter --net=/run/netns/'
            + node.netns
            + " -- unshare --uts --mount --pid --cgroup --fork --kill-child --mount-proc "
            + f"/usr/bin/python3 {INIT} {node.state / 'init.json'}"
        )
        with (node.state / "init.log").open("wb") as log:
            node.launcher = subprocess.Popen(
                ["sh", "-c", script, "sh", *procs],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def _wait_for_sshd(self, node: Node, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert node.launcher is not None
            if node.launcher.poll() is not None:
                break
            try:
                with socket.create_connection((node.address, 22), timeout=1):
                    return
            except OSError:
                time.sleep(0.2)
        log = (node.state / "init.log").read_text(errors="replace")
        raise RuntimeError(f"node {node.name}: sshd did not come up\n{log[-2000:]}")

    def stop(self) -> None:
        """Kill every node process, remove namespaces, bridge and cgroups (idempotent)."""
        for node in self.nodes:
            if node.launcher is not None and node.launcher.poll() is None:
                node.launcher.send_signal(signal.SIGKILL)  # --kill-child: PID 1 dies too
                node.launcher.wait(timeout=30)
            for _ in range(50):
                pids = subprocess.run(
                    ["ip", "netns", "pids", node.netns], capture_output=True, text=True
                ).stdout.split()
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(int(pid), signal.SIGKILL)
                time.sleep(0.2)
            subprocess.run(["ip", "netns", "del", node.netns], capture_output=True)
            # the pair goes with its namespace once its last process is gone; do not wait
            subprocess.run(["ip", "link", "del", f"{node.netns}-h"[:15]], capture_output=True)
            for own in node.cgroups or _leftover_cgroups(node.name):
                _remove_cgroup(own)
            node.cgroups = []
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)

    def node(self, name: str) -> Node:
        """The node called `name`."""
        return next(n for n in self.nodes if n.name == name)

    # --- inside a node ------------------------------------------------------------------
    def run(
        self, node: str, argv: list[str], timeout: float = 180, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run `argv` on `node` (all its namespaces), as a login there would."""
        target = self.node(node)
        base = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
        return subprocess.run(
            [
                "nsenter",
                "-t",
                str(target.init_pid()),
                "-n",
                "-u",
                "-m",
                "-p",
                "-C",
                "--wd=/",
                *argv,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**base, "HOME": "/root", "LANG": "C.UTF-8", **(env or {})},
        )


def _leftover_cgroups(name: str) -> list[Path]:
    return [folder / f"archform-{name}" for *_, folder in _hierarchies()]


def _remove_cgroup(own: Path, timeout: float = 20) -> None:
    """Remove a node's cgroup and what Slurm made under it, deepest first (killed tasks
    leave their cgroups a moment after the kill: retry until `timeout`)."""
    deadline = time.monotonic() + timeout
    while own.is_dir():
        folders = sorted((p for p in own.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts))
        for folder in [*folders, own]:
            try:
                folder.rmdir()
            except OSError as exc:
                if time.monotonic() > deadline:
                    print(f"warning: could not remove {folder}: {exc}", file=sys.stderr)
                    return
        time.sleep(0.2)
