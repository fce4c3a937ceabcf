"""gres.conf device files and Cores= against the node layout of slurm.conf.

Two checks on the generated files (slurmctld does not read Cores=; slurmd does):

- affinity_problems: every Cores= index lies below the node's Sockets x CoresPerSocket
  (gres.conf(5): Cores= are Slurm's logical core indices, core 0 = first core of the first
  socket), no device file is listed twice for a node, and two lines of a node have the same
  or disjoint core sets (a GPU is local to one NUMA domain; partly overlapping sets mean a
  wrong mapping).
- slurmd_gres: the real `slurmd -G` (print the node's merged GRES and exit) for one node of
  every NodeName line with GRES. slurmd maps Cores= through the machine's hwloc topology,
  so it runs with HWLOC_SYNTHETIC set to the node's layout (hwloc's synthetic topology
  variable, https://www.open-mpi.org/projects/hwloc/doc/v2.9.0/a00372.php) and with the
  /dev/nvidiaN files moved into the sandbox (character devices when root can mknod them).
  An "error:" line fails the check (slurmd prints "Invalid GRES data for gpu, Cores=..." for
  a core beyond the node and still exits 0).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from archform.render.public import expand, int_list
from archform.verify.checks.slurm_sandbox import conf_lines

_RANGE = re.compile(r"(.*?)\[(\d+)-(\d+)\]$")
# Regular files stand in for /dev/nvidiaN when this process cannot mknod (not root).
_NOT_A_DEVICE = "is not a valid character or block device"


def _files(expr: str) -> list[str]:
    match = _RANGE.fullmatch(expr)
    if match:
        return [f"{match.group(1)}{i}" for i in range(int(match.group(2)), int(match.group(3)) + 1)]
    return [expr] if expr else []


def node_layouts(slurm_text: str) -> dict[str, tuple[int, int, int]]:
    """Node name -> (Sockets, CoresPerSocket, ThreadsPerCore) of its NodeName line."""
    out: dict[str, tuple[int, int, int]] = {}
    for pairs in conf_lines(slurm_text):
        fields = dict(pairs)
        if pairs[0][0] != "NodeName" or pairs[0][1] == "DEFAULT":
            continue
        layout = (
            int(fields.get("Sockets", 1)),
            int(fields.get("CoresPerSocket", 1)),
            int(fields.get("ThreadsPerCore", 1)),
        )
        out.update(dict.fromkeys(expand(fields["NodeName"]), layout))
    return out


def affinity_problems(slurm_text: str, gres_text: str) -> list[str]:
    """Cores= beyond the node, device files listed twice, partly overlapping core sets."""
    layouts = node_layouts(slurm_text)
    problems: list[str] = []
    seen: dict[str, list[tuple[list[str], set[int] | None]]] = {}
    for pairs in conf_lines(gres_text):
        fields = dict(pairs)
        if "NodeName" not in fields or "File" not in fields:
            continue
        try:
            cores = int_list(fields["Cores"]) if "Cores" in fields else None
        except ValueError:
            problems.append(f"{fields['NodeName']}: Cores={fields['Cores']} is no core list")
            continue
        nodes = expand(fields["NodeName"])
        layout = layouts.get(nodes[0])
        if cores is not None and layout is not None and max(cores) >= layout[0] * layout[1]:
            problems.append(
                f"{fields['NodeName']}: Cores={fields['Cores']} beyond the node's "
                f"{layout[0] * layout[1]} cores (Sockets={layout[0]} x CoresPerSocket={layout[1]})"
            )
        entry = (_files(fields["File"]), cores)
        for node in nodes:
            seen.setdefault(node, []).append(entry)
    for node, entries in sorted(seen.items()):
        files = [f for names, _ in entries for f in names]
        twice = sorted({f for f in files if files.count(f) > 1})
        if twice:
            problems.append(f"{node}: {', '.join(twice)} listed on more than one line")
        sets = [c for _, c in entries if c is not None]
        for i, first in enumerate(sets):
            for second in sets[i + 1 :]:
                if first != second and first & second:
                    problems.append(f"{node}: core sets partly overlap ({sorted(first & second)})")
    return sorted(set(problems))


def _sandbox_gres(gres_text: str, sandbox: Path) -> str:
    """gres.conf with /dev/nvidiaN moved into the sandbox, the files created."""
    dev = sandbox / "dev"
    dev.mkdir(exist_ok=True)
    out = gres_text.replace("/dev/nvidia", f"{dev}/nvidia")
    for pairs in conf_lines(out):
        for name in _files(dict(pairs).get("File", "")):
            path = Path(name)
            if path.exists():
                continue
            minor = int(re.sub(r"\D", "", path.name) or 0)
            try:
                os.mknod(path, 0o600 | 0o020000, os.makedev(195, minor))  # S_IFCHR, nvidia major
            except PermissionError:
                path.touch()
    return out


def slurmd_gres(
    slurmd: Path, conf: Path, gres_text: str, env: dict[str, str]
) -> tuple[list[str], list[str]]:
    """(problems, summary lines) of `slurmd -G` for one node per NodeName line with GRES."""
    sandbox = conf.parent
    (sandbox / "gres.conf").write_text(_sandbox_gres(gres_text, sandbox))
    problems: list[str] = []
    shown: list[str] = []
    firsts: dict[str, tuple[int, int, int]] = {}
    for pairs in conf_lines(conf.read_text()):
        fields = dict(pairs)
        if pairs[0][0] == "NodeName" and "Gres" in fields:
            node = expand(fields["NodeName"])[0]
            firsts[node] = (
                int(fields.get("Sockets", 1)),
                int(fields.get("CoresPerSocket", 1)),
                int(fields.get("ThreadsPerCore", 1)),
            )
    for node, (sockets, cores, threads) in sorted(firsts.items()):
        synthetic = f"package:{sockets} core:{cores} pu:{threads}"
        result = subprocess.run(
            [str(slurmd), "-f", str(conf), "-N", node, "-G"],
            env={**env, "HWLOC_SYNTHETIC": synthetic},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        text = result.stdout + result.stderr
        bad = [
            line
            for line in text.splitlines()
            if re.search(r"error|fatal", line, re.IGNORECASE) and _NOT_A_DEVICE not in line
        ]
        if result.returncode != 0 or bad:
            problems.append(f"{node}: " + ("; ".join(bad[:3]) or f"exit {result.returncode}"))
        dev = str(sandbox / "dev")
        shown += [line.replace(dev, "/dev") for line in text.splitlines() if "Gres Name=" in line]
    return problems, shown
