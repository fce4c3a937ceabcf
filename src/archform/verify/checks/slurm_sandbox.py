"""Prepare generated Slurm files for a local, unprivileged-looking slurmctld sandbox.

The rewrite keeps every scheduling-relevant line and changes only what ties the files to
a real cluster (measured against Slurm 22.05; no public source): the controller becomes this
host, auth is off (auth/none, cred/none: no munge), state/log/pid paths move into a temp
folder, ports are free ones, accounting is off (no slurmdbd here), and every node gets a
loopback NodeAddr so names need not resolve (without it slurmctld retries DNS 10 times per
node and ignores SIGTERM meanwhile).
"""

from __future__ import annotations

import re
import socket
from pathlib import Path

from archform.render.public import expand

# Dropped: the controller (re-added as this host) and everything that needs slurmdbd, which
# the sandbox does not run (slurmctld is fatal on AccountingStorageTRES=gres/gpu without it).
DROP = {
    "SlurmctldHost",
    "AccountingStorageHost",
    "AccountingStorageEnforce",
    "AccountingStorageTRES",
    "JobAcctGatherType",
    "AuthInfo",
    "AuthAltTypes",
    "JobCompLoc",
}


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def loopback_addresses(count: int, start: int) -> str:
    """A hostlist of `count` loopback addresses (127.1.B.[1-250]) beginning at index start."""
    parts: list[str] = []
    index = start
    end = start + count
    while index < end:
        block, offset = divmod(index, 250)
        take = min(250 - offset, end - index)
        lo, hi = offset + 1, offset + take
        third, second = block % 256, 1 + block // 256
        prefix = f"127.{second}.{third}."
        parts.append(f"{prefix}{lo}" if lo == hi else f"{prefix}[{lo}-{hi}]")
        index += take
    return ",".join(parts)


def _split(line: str) -> list[tuple[str, str]]:
    pairs = []
    for word in line.split():
        key, _, value = word.partition("=")
        pairs.append((key, value))
    return pairs


def _join(pairs: list[tuple[str, str]]) -> str:
    return " ".join(f"{k}={v}" for k, v in pairs)


def rewrite_slurm_conf(text: str, sandbox: Path, hostname: str) -> tuple[str, int]:
    """The sandbox slurm.conf and the number of nodes it defines."""
    ports = (free_port(), free_port())
    overrides = {
        "SlurmUser": "root",
        "AuthType": "auth/none",
        "CredType": "cred/none",
        "StateSaveLocation": str(sandbox / "state"),
        "SlurmdSpoolDir": str(sandbox / "spool"),
        "SlurmctldPidFile": str(sandbox / "slurmctld.pid"),
        "SlurmdPidFile": str(sandbox / "slurmd.pid"),
        "SlurmctldLogFile": str(sandbox / "slurmctld.log"),
        "SlurmdLogFile": str(sandbox / "slurmd.log"),
        "SlurmctldPort": str(ports[0]),
        "SlurmdPort": str(ports[1]),
        "MailProg": "/bin/true",
        "AccountingStorageType": "accounting_storage/none",
        "ResumeProgram": "/bin/true",
        "SuspendProgram": "/bin/true",
    }
    out = [f"SlurmctldHost={hostname}"]
    nodes = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            out.append(raw)
            continue
        pairs = _split(line)
        key = pairs[0][0]
        if key in DROP and len(pairs) == 1:
            continue
        if key == "NodeName" and pairs[0][1] != "DEFAULT":
            count = len(expand(pairs[0][1]))
            pairs = [p for p in pairs if p[0] != "NodeAddr"]
            pairs.insert(1, ("NodeAddr", loopback_addresses(count, nodes)))
            nodes += count
            out.append(_join(pairs))
            continue
        if len(pairs) == 1 and key in overrides:
            out.append(f"{key}={overrides.pop(key)}")
            continue
        out.append(raw)
    out += [f"{k}={v}" for k, v in overrides.items()]
    if "State=CLOUD" in text and not any(line.startswith("PrivateData=") for line in out):
        out.append("PrivateData=cloud")  # powered-down CLOUD nodes are hidden otherwise
    (sandbox / "state").mkdir(exist_ok=True)
    (sandbox / "spool").mkdir(exist_ok=True)
    return "\n".join(out) + "\n", nodes


def conf_lines(text: str) -> list[list[tuple[str, str]]]:
    """Key=value lines of a Slurm config file, comments dropped."""
    return [_split(line) for line in text.splitlines() if line.strip() and not line.startswith("#")]


def gres_mismatches(slurm_text: str, gres_text: str) -> list[str]:
    """Nodes whose slurm.conf Gres (gpu:TYPE:N) has no matching gres.conf line (type/count)."""
    declared: dict[str, tuple[str, int]] = {}
    for pairs in conf_lines(slurm_text):
        fields = dict(pairs)
        if pairs[0][0] != "NodeName" or "Gres" not in fields:
            continue
        for item in fields["Gres"].split(","):
            parts = item.split(":")
            if parts[0] == "gpu" and len(parts) == 3:
                for node in expand(fields["NodeName"]):
                    declared[node] = (parts[1], int(parts[2]))
    provided: dict[str, tuple[str, int]] = {}
    for pairs in conf_lines(gres_text):
        fields = dict(pairs)
        if fields.get("Name") != "gpu" or "NodeName" not in fields:
            continue
        count = int(fields["Count"]) if "Count" in fields else len(_files(fields.get("File", "")))
        for node in expand(fields["NodeName"]):
            # A node's GPUs may span several lines (one per group of GPU-local cores).
            kind, before = provided.get(node, (fields.get("Type", ""), 0))
            provided[node] = (kind if kind == fields.get("Type", "") else "mixed", before + count)
    problems = []
    for node, want in sorted(declared.items()):
        have = provided.get(node)
        if have != want:
            got = f"gpu:{have[0]}:{have[1]}" if have else "nothing"
            problems.append(f"{node}: slurm.conf gpu:{want[0]}:{want[1]}, gres.conf {got}")
    return problems


def _files(expr: str) -> list[str]:
    match = re.fullmatch(r"(.*?)\[(\d+)-(\d+)\]", expr)
    if match:
        return [f"{match.group(1)}{i}" for i in range(int(match.group(2)), int(match.group(3)) + 1)]
    return [expr] if expr else []
