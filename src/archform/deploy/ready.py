"""Are the cluster's Slurm nodes up? The first step of the acceptance phase.

Two views, both needed:

- every compute host of the inventory: its slurmd answers `scontrol show slurmd` (the local
  slurmd's status RPC). A slurmd that died or was stopped fails this at once, while the
  controller goes on listing the node as idle until its next ping, up to SlurmdTimeout/3
  later (slurm.conf(5): SlurmdTimeout, default 300 s), and a job step placed there waits for
  the node to be marked DOWN;
- the controller: `sinfo --Node` lists every node of slurm.conf in a usable state (idle,
  allocated, mixed, completing; powered-down cloud nodes, state suffix `~`, count as usable)
  and none as down, drained, failing or not responding (suffix `*`). sinfo(1), NODE STATE
  CODES.

Both are polled until every node is ready or `timeout` passes (nodes that were just started
take a few seconds to register); the error names each node that is not ready and why, so the
operator knows which machine to look at before validate.yml runs its longer checks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archform.deploy.plan import AnsibleProject

# sinfo's long state names (%T) that a healthy node may have; the suffix `~` (powered down,
# elastic CLOUD nodes) is allowed, `*` (not responding), `#`, `!`, `%`, `$`, `@` are not.
USABLE = frozenset({"idle", "allocated", "mixed", "completing", "planned"})
SLURMD_PROBE = "scontrol show slurmd"
SINFO = "sinfo --Node --noheader --format=%N|%T|%E"


@dataclass(frozen=True, slots=True)
class Probe:
    """One poll's findings: node -> why it is not ready (empty: every node is ready)."""

    problems: dict[str, str]
    nodes: int


def sinfo_problems(output: str) -> tuple[dict[str, str], int]:
    """Nodes `sinfo --Node --format=%N|%T|%E` shows as unusable, and how many nodes it lists."""
    problems: dict[str, str] = {}
    seen: set[str] = set()
    for line in output.splitlines():
        if not line.strip():
            continue
        name, state, reason = [*line.split("|", 2), "", ""][:3]
        seen.add(name)
        base = state.rstrip("~")
        if base not in USABLE:
            why = "not responding" if base.endswith("*") else f"state {state}"
            if reason.strip() and reason.strip() != "none":
                why += f": {reason.strip()}"
            problems.setdefault(name, f"Slurm: {why}")
    return problems, len(seen)


def _adhoc(private: Path, project_dir: Path, inventory: str, env: dict[str, str],
           pattern: str, command: str) -> dict[str, tuple[bool, str]]:  # fmt: skip
    """Run `command` on the hosts matching `pattern`: host -> (succeeded, output or error)."""
    import ansible_runner

    private.mkdir(parents=True, exist_ok=True)
    result: Any = ansible_runner.run(
        private_data_dir=str(private),
        host_pattern=pattern,
        module="ansible.builtin.command",
        module_args=command,
        inventory=str(project_dir / inventory),
        envvars=env,
        cmdline="--become",
        quiet=True,
    )
    found: dict[str, tuple[bool, str]] = {}
    for event in result.events:
        data = event.get("event_data") or {}
        host, res = data.get("host"), data.get("res") or {}
        kind = event.get("event")
        if host is None:
            continue
        if kind == "runner_on_ok":
            found[host] = (True, str(res.get("stdout", "")))
        elif kind in ("runner_on_failed", "runner_on_unreachable"):
            text = res.get("stderr") or res.get("msg") or "failed"
            label = "unreachable" if kind == "runner_on_unreachable" else "slurmd not answering"
            found[host] = (False, f"{label}: {str(text).strip().splitlines()[-1][:200]}")
    return found


def probe(private: Path, project_dir: Path, project: AnsibleProject, env: dict[str, str]) -> Probe:
    """One look at every compute host's slurmd and at the controller's node list."""
    problems: dict[str, str] = {}
    daemons = _adhoc(
        private / "slurmd", project_dir, project.inventory, env, "compute", SLURMD_PROBE
    )
    for host, (ok, text) in sorted(daemons.items()):
        if not ok:
            problems[host] = text
    listed = _adhoc(private / "sinfo", project_dir, project.inventory, env, "controller[0]", SINFO)
    if not listed:
        problems["controller"] = "no controller in the inventory"
        return Probe(problems, 0)
    host, (ok, text) = next(iter(listed.items()))
    if not ok:
        problems[host] = f"sinfo failed on the controller ({text})"
        return Probe(problems, 0)
    states, count = sinfo_problems(text)
    for name, why in states.items():
        problems.setdefault(name, why)
    return Probe(problems, count)


def wait_until_ready(
    private: Path,
    project_dir: Path,
    project: AnsibleProject,
    env: dict[str, str],
    timeout: float = 60,
    interval: float = 5,
) -> int:
    """Poll until every Slurm node is ready; return the node count.

    Raises RuntimeError naming the nodes that are not, with the reason, when `timeout` passes.
    """
    deadline = time.monotonic() + timeout
    attempt = 0
    while True:
        attempt += 1
        found = probe(private / f"poll-{attempt}", project_dir, project, env)
        if not found.problems:
            return found.nodes
        if time.monotonic() + interval > deadline:
            names = ", ".join(sorted(found.problems))
            detail = "; ".join(f"{n}: {why}" for n, why in sorted(found.problems.items()))
            raise RuntimeError(f"Slurm nodes not ready after {timeout:.0f} s: {names} ({detail})")
        time.sleep(interval)
