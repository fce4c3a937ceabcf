"""Slurm: start a real slurmctld on the generated files and compare it with the blueprint.

slurmctld has no dry-run flag, and its exit code misses several mistakes (a GRES dropped,
unknown hosts in a switch, a bad gres.conf key only log an error), so the check starts the
daemon in a sandbox (see slurm_sandbox), requires `scontrol ping` UP, reads its log for
errors and warnings, compares nodes and GRES (`scontrol show node`) and leaf switches
(`scontrol show topology`) with the blueprint, then stops it (SIGTERM, SIGKILL fallback).

Each project is checked by the parser of its declared release when one is installed, else
by the nearest older and newer installed parsers (slurm_parsers: ARCHFORM_SLURM_PREFIXES,
/usr, /opt/archform/slurm/*). Lines that the generator writes differently for the parser's
release (plugin names, topology.conf) are swapped for that release's rendering, and the
result says which versions validated the files and what was re-rendered.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from archform.install import slurm_hint
from archform.render.public import expand
from archform.spec import slurm
from archform.spec.slurm import SlurmVersion
from archform.verify import Check, Result, Status, tool_path
from archform.verify.checks import slurm_gres, slurm_parsers
from archform.verify.checks._projects import Project, find_projects, run, tail, tool_env
from archform.verify.checks.slurm_parsers import Parser
from archform.verify.checks.slurm_sandbox import gres_mismatches, rewrite_slurm_conf

NAME = "slurm"
FILES = ("slurm.conf", "cgroup.conf", "gres.conf", "topology.conf")
LOG_PROBLEM = re.compile(r"error|warning|fatal", re.IGNORECASE)
# Messages of a sandboxed first start (or of a busy machine) that say nothing about the
# configuration.
NOISE = re.compile(
    r"pmix|mpi/pmi|MPI: Cannot create context|state file|Trying backup state save"
    r"|No such file or directory.*(state|\.old)|create_mmap_buf|load_all_.*state"
    # slurmctld times gettimeofday() at start; on a loaded machine it warns. Not config.
    r"|High latency for 1000 calls to gettimeofday"
    # A reply to a query client (scontrol) that timed out and hung up first: load, not config.
    r"|slurm_send_node_msg: \[socket:",
    re.IGNORECASE,
)


def installed_version() -> tuple[str, tuple[int, int]]:
    """('22.05.8', (22, 5)) from `slurmctld -V` of the slurmctld on PATH."""
    proc = run([tool_path("slurmctld"), "-V"], timeout=30)
    version = slurm.parse_version(proc.stdout or proc.stderr)
    return str(version), version.release_tuple


def _version_rewrites(
    project: Project, version: SlurmVersion
) -> tuple[dict[str, str], list[str], str]:
    """Per-file text substitutions (or whole-file replacements) for the parser's release."""
    cluster = project.cluster
    if cluster is None:
        return {}, [], "no resolved blueprint: files validated as generated"
    if cluster.scheduler.slurm_version.release == version.release:
        return {}, [], f"rendered for and validated with Slurm {cluster.scheduler.version}"
    from archform.render.public import ansible_context as context
    from archform.render.public import render, slurm_context

    ctx = context(cluster)
    other = replace(ctx, slurm=slurm_context(ctx.view, version.release))
    replaced: dict[str, str] = {}
    changed: list[str] = []
    for name in FILES:
        template = f"ansible/roles/slurm/files/{name}.j2"
        ours = render(template, ctx).splitlines()
        theirs = render(template, other).splitlines()
        differing = [(a, b) for a, b in zip(ours, theirs, strict=False) if a != b and a[:1] != "#"]
        content = [line for line in ours if line and line[:1] != "#"]
        if len(ours) != len(theirs) or (content and len(differing) * 2 > len(content)):
            replaced[name] = "\n".join(theirs) + "\n"
            changed.append(f"{name} (whole file)")
        elif differing:
            for old, new in differing:
                replaced[f"{name}\0{old}"] = new
                changed.append(f"{name}: {old} -> {new}")
    note = (
        f"rendered for Slurm {cluster.scheduler.version}; validated with the installed "
        f"{version.release}"
    )
    if changed:
        note += " re-rendered for it: " + "; ".join(changed)
    else:
        note += " (no option differs between the two)"
    return replaced, changed, note


def _prepare(project: Project, sandbox: Path, version: SlurmVersion) -> tuple[Path, int, str]:
    files = project.ansible / "roles" / "slurm" / "files"
    replaced, _, note = _version_rewrites(project, version)
    texts: dict[str, str] = {}
    for name in FILES:
        source = files / name
        if name in replaced:
            texts[name] = replaced[name]
        elif source.is_file():
            lines = source.read_text().splitlines()
            texts[name] = "\n".join(replaced.get(f"{name}\0{line}", line) for line in lines) + "\n"
    hostname = socket.gethostname().split(".")[0]
    conf, nodes = rewrite_slurm_conf(texts["slurm.conf"], sandbox, hostname)
    texts["slurm.conf"] = conf
    for name, text in texts.items():
        (sandbox / name).write_text(text)
    return sandbox / "slurm.conf", nodes, note


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _wait_up(
    proc: subprocess.Popen[bytes], scontrol: str, env: dict[str, str], limit: float
) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        ping = run([scontrol, "ping"], env=env, timeout=15)
        if "UP" in ping.stdout:
            return True
        time.sleep(0.3)
    return False


def _scontrol(scontrol: str, args: list[str], env: dict[str, str]) -> str:
    """The output of an scontrol query, retried, as a busy slurmctld can time an RPC out."""
    proc = run([scontrol, *args], env=env, timeout=600)
    for _ in range(3):
        if proc.returncode == 0:
            break
        time.sleep(5)
        proc = run([scontrol, *args], env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"scontrol {' '.join(args)}: {tail(proc.stderr or proc.stdout, 2)}")
    return proc.stdout


def _nodes(scontrol: str, env: dict[str, str]) -> dict[str, str]:
    """Node name -> Gres string, from `scontrol show node --oneliner` (CLOUD nodes too)."""
    stdout = _scontrol(scontrol, ["--all", "--oneliner", "show", "node"], env)
    nodes: dict[str, str] = {}
    for line in stdout.splitlines():
        fields = dict(w.partition("=")[::2] for w in line.split() if "=" in w)
        if "NodeName" in fields:
            nodes[fields["NodeName"]] = fields.get("Gres", "(null)")
    return nodes


def _leaves(scontrol: str, env: dict[str, str]) -> list[set[str]]:
    """Node sets of the lowest-level switches (or blocks) slurmctld loaded."""
    found = []
    for line in _scontrol(scontrol, ["show", "topology"], env).splitlines():
        fields = dict(w.partition("=")[::2] for w in line.split() if "=" in w)
        is_leaf = fields.get("Level") == "0" or "BlockName" in fields
        if is_leaf and fields.get("Nodes"):
            found.append(set(expand(fields["Nodes"])))
    return found


def _expected(project: Project) -> dict[str, Any] | None:
    if project.cluster is None:
        return None
    from archform.render.public import expected_leaves, training_view

    view = training_view(project.cluster)
    gres = {}
    for group in view.groups:
        want = (
            f"gpu:{group.gpu_gres_type}:{group.gpus_per_node}" if group.gpus_per_node else "(null)"
        )
        gres.update(dict.fromkeys(group.hostnames, want))
    return {"gres": gres, "leaves": [set(leaf) for leaf in expected_leaves(view)]}


def check_project(project: Project, parser: Parser) -> list[Result]:
    """Start one parser's slurmctld on a project's Slurm files; compare with the blueprint."""
    label = f"{project.label}/roles/slurm/files"
    full, version = str(parser.version), parser.version
    scontrol = str(parser.scontrol)
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="archform-slurm-") as tmp:
        sandbox = Path(tmp)
        conf, count, note = _prepare(project, sandbox, version)
        files = project.ansible / "roles" / "slurm" / "files"
        if (files / "gres.conf").is_file():
            bad = gres_mismatches(
                (files / "slurm.conf").read_text(), (files / "gres.conf").read_text()
            )
            results.append(
                Result(
                    NAME,
                    f"{label}/gres.conf",
                    "failed" if bad else "passed",
                    "; ".join(bad[:5]) or "types and counts match slurm.conf",
                )
            )
            results += _gres_affinity(parser, files, conf, label)
        env = tool_env({"SLURM_CONF": str(conf)})
        log = sandbox / "slurmctld.log"
        with (sandbox / "stdout.log").open("wb") as out:
            proc = subprocess.Popen(
                [str(parser.slurmctld), "-D", "-c", "-i", "-f", str(conf)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            up = _wait_up(proc, scontrol, env, limit=60 + count / 100)
            text = (log.read_text(errors="replace") if log.exists() else "") + (
                sandbox / "stdout.log"
            ).read_text(errors="replace")
            flagged = [line for line in text.splitlines() if LOG_PROBLEM.search(line)]
            problems = [line for line in flagged if not NOISE.search(line)]
            status: Status = "passed" if up and not problems else "failed"
            head = f"slurmctld {full} {'UP' if up else 'NOT UP'}"
            detail = (
                f"{head}; {len(problems)} error/warning line(s) "
                f"({len(flagged) - len(problems)} first-start or load-timing lines ignored)"
            )
            if problems:
                detail += ": " + tail("\n".join(problems), 5)
            results.append(Result(NAME, f"{label} (slurmctld)", status, f"{detail}; {note}"))
            if up:
                try:
                    results += _compare(project, label, scontrol, env)
                except RuntimeError as exc:
                    results.append(Result(NAME, f"{label} (nodes, GRES)", "failed", str(exc)))
        finally:
            _stop(proc)
            with contextlib.suppress(OSError):
                shutil.rmtree(sandbox / "state", ignore_errors=True)
    return results


def _gres_affinity(parser: Parser, files: Path, conf: Path, label: str) -> list[Result]:
    """Cores= and device files against the node layout, statically and by `slurmd -G`."""
    gres_text = (files / "gres.conf").read_text()
    bad = slurm_gres.affinity_problems((files / "slurm.conf").read_text(), gres_text)
    out = [
        Result(
            NAME,
            f"{label}/gres.conf (Cores)",
            "failed" if bad else "passed",
            "; ".join(bad[:5]) or "Cores= within each node, no device twice, core sets disjoint",
        )
    ]
    slurmd = parser.prefix / "sbin" / "slurmd"
    if slurmd.is_file():
        problems, shown = slurm_gres.slurmd_gres(slurmd, conf, gres_text, tool_env({}))
        detail = "; ".join(problems[:3]) or f"slurmd {parser.version} -G: " + (
            " | ".join(line.split("Gres ", 1)[-1] for line in shown[:4]) or "no GRES lines"
        )
        out.append(
            Result(
                NAME, f"{label}/gres.conf (slurmd -G)", "failed" if problems else "passed", detail
            )
        )
    return out


def _compare(project: Project, label: str, scontrol: str, env: dict[str, str]) -> list[Result]:
    expected = _expected(project)
    nodes = _nodes(scontrol, env)
    if expected is None:
        return [Result(NAME, f"{label} (nodes)", "passed", f"{len(nodes)} nodes; no blueprint")]
    want = expected["gres"]
    wrong = [f"{n}: {nodes.get(n, 'missing')} != {g}" for n, g in want.items() if nodes.get(n) != g]
    extra = sorted(set(nodes) - set(want))
    status: Status = "passed" if not wrong and not extra and len(nodes) == len(want) else "failed"
    detail = f"{len(nodes)} of {len(want)} nodes with the blueprint's GRES"
    if wrong or extra:
        detail += ": " + "; ".join((wrong + [f"unexpected {n}" for n in extra])[:5])
    results = [Result(NAME, f"{label} (nodes, GRES)", status, detail)]
    leaves = _leaves(scontrol, env)
    want_leaves = expected["leaves"]
    same = sorted(map(sorted, leaves)) == sorted(map(sorted, want_leaves))
    detail = f"{len(leaves)} leaf switch(es) loaded, blueprint has {len(want_leaves)}"
    if not same:
        covered = set().union(*leaves) if leaves else set()
        missing = sorted(set().union(*want_leaves) - covered) if want_leaves else []
        if missing:
            detail += f"; nodes in no leaf: {', '.join(missing[:5])}"
    results.append(Result(NAME, f"{label} (topology)", "passed" if same else "failed", detail))
    return results


def applies(root: Path) -> bool:
    """Trees with generated Slurm files."""
    return any(root.rglob("ansible/roles/slurm/files/slurm.conf"))


def _declared(project: Project, parsers: list[Parser]) -> SlurmVersion:
    if project.cluster is not None:
        return project.cluster.scheduler.slurm_version
    return parsers[-1].version  # no blueprint: the newest parser reads the files as they are


def check_with_parsers(project: Project, parsers: list[Parser]) -> list[Result]:
    """Validate one project with the parsers chosen for its declared version, then say which."""
    label = f"{project.label}/roles/slurm/files"
    declared = _declared(project, parsers)
    nodes = project.cluster.compute.total_nodes if project.cluster is not None else 0
    # A parser whose release caps the node count below the blueprint's cannot stand in for
    # the declared release (24.11+ stop past MAX_SLURM_NODES; see archform.spec.slurm).
    capped = [p for p in parsers if (slurm.max_nodes(p.version) or nodes) < nodes]
    usable = [p for p in parsers if p not in capped]
    chosen = slurm_parsers.choose(declared, usable)
    results: list[Result] = []
    for parser in chosen:
        results.extend(check_project(project, parser))
    versions = " and ".join(str(p.version) for p in chosen)
    if len(chosen) == 1 and chosen[0].version.release == declared.release:
        how = f"declared Slurm {declared}: validated by its own release's parser, {versions}"
    else:
        installed = ", ".join(str(p.version) for p in parsers)
        how = (
            f"declared Slurm {declared}: no {declared.release} parser installed "
            f"(have {installed}); validated by the nearest "
            + ("older and newer parsers" if len(chosen) == 2 else "parser")
            + f", {versions}, "
            + (
                "each on the files re-rendered for its release"
                if len(chosen) == 2
                else "on the files re-rendered for its release"
            )
        )
    if capped:
        how += "; not used: " + ", ".join(
            f"{p.version} (holds at most {slurm.max_nodes(p.version)} nodes)" for p in capped
        )
    bad = [r for r in results if r.status == "failed"]
    if not chosen:
        how = f"declared Slurm {declared}: no installed parser can hold {nodes} nodes; " + how
        bad = [Result(NAME, label, "failed", how)]
    results.append(Result(NAME, f"{label} (versions)", "failed" if bad else "passed", how))
    return results


def run_check(root: Path) -> list[Result]:
    """Check every project's Slurm files with the installed parsers."""
    parsers = slurm_parsers.installed()
    results: list[Result] = []
    for project in find_projects(root):
        if not (project.ansible / "roles" / "slurm" / "files" / "slurm.conf").is_file():
            continue
        if not parsers:
            searched = ", ".join(slurm_parsers.prefixes())
            results.append(
                Result(
                    NAME,
                    project.label,
                    "skipped",
                    f"no slurmctld/scontrol found under {searched} "
                    f"(hint: {slurm_hint(slurm_parsers.ENV)})",
                )
            )
            continue
        results.extend(check_with_parsers(project, parsers))
    return results


CHECK = Check(name=NAME, applies=applies, run=run_check, tools=("slurmctld", "scontrol"))
