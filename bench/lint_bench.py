"""Benchmark `archform lint`: wall time and peak RSS against the import floor.

Cases (each run as a fresh `python -m archform lint ...` process, like CI runs it):
  floor      python -c "import typer, pydantic, ruamel.yaml"   (the libraries alone; issue 10)
  basemodel  python -c "import typer, ruamel.yaml; from pydantic import BaseModel, Field"
             (for reference: `import pydantic` is lazy and does not load its model machinery)
  no-op      typer running a do-nothing command with `archform lint`'s parameters (reference:
             typer converts parameters with pydantic TypeAdapters, which `import typer` skips)
  spec       python -c "import archform.spec"
  one each   lint every bundled blueprint on its own (blueprints/*.yaml)
  folder-50  lint a folder of 50 documents generated from the bundled blueprints
             (every document renamed per copy; Platform references renamed with them)
  nodes-1000 lint one on-prem blueprint with 1,000 nodes and a 1,000-host inventory

Fairness: every child runs with compiled bytecode, as an installed package does (pip compiles
at install time). The children get PYTHONPYCACHEPREFIX set to a fresh temporary folder and
PYTHONDONTWRITEBYTECODE removed, so the warm-up run compiles archform and the libraries alike
and the timed runs load .pyc files. The runs are interleaved (one run of every case per round),
so load from other jobs on a shared machine falls on every case alike.

Usage: python bench/lint_bench.py [--repeat 7] [--output bench/RESULTS.md]
Reports the median and minimum wall time and the peak RSS of each case.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTES = "<!-- notes: kept when the tables above are regenerated -->"
BLUEPRINTS = ROOT / "blueprints"


def child_env(pycache: Path) -> dict[str, str]:
    """The environment of every child: archform from this tree, bytecode cached under pycache."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_COLOR="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


def run_once(args: list[str], env: dict[str, str]) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, peak RSS KiB, exit code) of one child process.

    CPU is the child's user + system time (getrusage via wait4): on a machine shared with
    other jobs it varies far less than wall time, which includes waiting for a core.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss), proc.returncode


def measure(
    cases: list[tuple[str, list[str]]], repeat: int, env: dict[str, str]
) -> list[tuple[str, dict[str, float]]]:
    """Warm every case once, then `repeat` rounds of one run per case (interleaved)."""
    for _, args in cases:
        run_once(args, env)
    walls: list[list[float]] = [[] for _ in cases]
    cpus: list[list[float]] = [[] for _ in cases]
    rss: list[list[int]] = [[] for _ in cases]
    for _ in range(repeat):
        for i, (_, args) in enumerate(cases):
            wall, cpu, peak, code = run_once(args, env)
            if code not in (0, 1):
                raise SystemExit(f"{' '.join(args)} failed with exit code {code}")
            walls[i].append(wall)
            cpus[i].append(cpu)
            rss[i].append(peak)
    return [
        (
            name,
            {
                "median": statistics.median(walls[i]),
                "min": min(walls[i]),
                "cpu": statistics.median(cpus[i]),
                "rss_mib": max(rss[i]) / 1024,
            },
        )
        for i, (name, _) in enumerate(cases)
    ]


# typer 0.29 (installed here) converts every command-line parameter through a pydantic
# TypeAdapter (typer/_coercion.py, typer/_adapters.py): running any command imports pydantic's
# model machinery and builds one adapter per parameter, which `import typer` alone does not.
# This is that cost for lint's own parameter list, with no work.
NOOP_COMMAND = """
import functools, sys
import typer
from archform.cli import lint
from archform.cli._app import _root
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
app.callback()(_root)
app.command("lint")(functools.wraps(lint.lint)(lambda *args, **kwargs: None))
app(["lint", sys.argv[1]], standalone_mode=False)
"""

PHASES = """
import json, sys, time
t0 = time.perf_counter()
from archform.cli._app import build
build(["lint"])
t1 = time.perf_counter()
from pydantic import BaseModel
t2 = time.perf_counter()
from archform.spec.catalog import load_catalog
load_catalog()
t3 = time.perf_counter()
from archform.spec import load_paths
blueprints = load_paths(sys.argv[1:])
t4 = time.perf_counter()
from archform.lint.rule import load_rules
registry = load_rules()
t5 = time.perf_counter()
from archform.lint.engine import lint
result = lint(blueprints, registry=registry)
t6 = time.perf_counter()
from archform.lint.report import LintReport, render
render("text", LintReport(result, {f: blueprints.lines(f) for f in blueprints.texts}))
t7 = time.perf_counter()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6]))
"""
PHASE_NAMES = (
    "build the CLI: typer and the lint command only",
    "pydantic's model machinery (typer's parameter conversion imports it too)",
    "load the hardware catalog (JSON twin of catalog.yaml)",
    "read + validate the blueprint(s) (builds the validators of the kinds read)",
    "import the rule modules",
    "run the rules",
    "render the text report",
)


def phases(paths: list[str], repeat: int, env: dict[str, str]) -> list[float]:
    """Minimum time of each phase of one lint, measured inside fresh processes."""
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", PHASES, *paths],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        runs.append(json.loads(out))
    return [min(r[i] for r in runs) for i in range(len(PHASE_NAMES))]


def make_folder(target: Path, documents: int = 50) -> int:
    """Copies of the bundled blueprints with renamed documents; returns documents written."""
    sources = sorted(BLUEPRINTS.glob("*.yaml"))
    per_copy = sum(
        p.read_text().count("\nkind: ") + p.read_text().startswith("kind: ") for p in sources
    )
    copies = -(-documents // per_copy)
    written = 0
    for k in range(copies):
        for src in sources:
            text = src.read_text()
            text = re.sub(
                r"^(name|training|inference): ([a-z0-9-]+)$", rf"\1: \2-c{k}", text, flags=re.M
            )
            (target / f"c{k:02d}-{src.name}").write_text(text)
            written += text.count("\nkind: ")
    return written


def make_big(path: Path, nodes: int = 1000) -> None:
    """An on-prem blueprint with `nodes` nodes and a host inventory of the same size."""
    text = (BLUEPRINTS / "onprem-h100-ib-lustre.yaml").read_text()
    text = text.replace("  nodes: 32\n", f"  nodes: {nodes}\n")
    text = text.replace("scheduler:\n", "scheduler:\n  backup_controller: true\n", 1)
    hosts = ["hosts:", "  controller: {name: ctl1, address: 10.1.0.1}", "  compute:"]
    hosts += [
        f"    - {{name: gpu{i:04d}, address: 10.2.{i // 250}.{i % 250 + 1}}}" for i in range(nodes)
    ]
    path.write_text(text + "\n".join(hosts) + "\n")


def machine() -> str:
    """A one-line description of this machine."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} logical CPUs (shared with other jobs), "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def main() -> None:
    """Run the benchmark and write the Markdown results."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--output", type=Path, default=ROOT / "bench" / "RESULTS.md")
    ns = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="archform-bench-") as tmp:
        env = child_env(Path(tmp) / "pycache")
        folder = Path(tmp) / "fifty"
        folder.mkdir()
        docs = make_folder(folder)
        big = Path(tmp) / "big.yaml"
        make_big(big)
        bundled = sorted(BLUEPRINTS.glob("*.yaml"))
        cases = [
            (
                'floor: `python -c "import typer, pydantic, ruamel.yaml"` (the libraries)',
                [py, "-c", "import typer, pydantic, ruamel.yaml"],
            ),
            (
                "reference: `import typer, ruamel.yaml; from pydantic import BaseModel, Field`",
                [py, "-c", "import typer, ruamel.yaml; from pydantic import BaseModel, Field"],
            ),
            (
                "reference: typer runs a no-op command with `archform lint`'s parameters",
                [py, "-c", NOOP_COMMAND, str(BLUEPRINTS / "onprem-h100-ib-lustre.yaml")],
            ),
            ('`python -c "import archform.spec"`', [py, "-c", "import archform.spec"]),
        ]
        cases += [
            (f"lint {path.name}", [py, "-m", "archform", "lint", str(path)]) for path in bundled
        ]
        cases += [
            (f"lint a folder of {docs} documents", [py, "-m", "archform", "lint", str(folder)]),
            (
                "lint a 1,000-node blueprint (1,000-host inventory)",
                [py, "-m", "archform", "lint", str(big)],
            ),
        ]
        results = measure(cases, ns.repeat, env)
        split = {
            "one": phases([str(BLUEPRINTS / "onprem-h100-ib-lustre.yaml")], ns.repeat, env),
            "folder-50": phases([str(folder)], ns.repeat, env),
            "nodes-1000": phases([str(big)], ns.repeat, env),
        }
    floor = results[0][1]["median"]
    floor_min = results[0][1]["min"]
    floor_cpu = results[0][1]["cpu"]
    lines = [
        "## Performance",
        "",
        f"`python bench/lint_bench.py --repeat {ns.repeat}` ({ns.repeat} interleaved rounds "
        "after one warm-up run of every case; each run is a fresh process with compiled "
        "bytecode, as an installed package has). Machine: " + machine() + ".",
        "",
        "| case | median wall | min wall | median CPU | x floor (median wall) | "
        "x floor (min wall) | x floor (median CPU) | peak RSS |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results:
        lines.append(
            f"| {name} | {r['median'] * 1000:.0f} ms | {r['min'] * 1000:.0f} ms | "
            f"{r['cpu'] * 1000:.0f} ms | {r['median'] / floor:.2f} | {r['min'] / floor_min:.2f} | "
            f"{r['cpu'] / floor_cpu:.2f} | {r['rss_mib']:.0f} MiB |"
        )
    singles = [r for name, r in results if name.startswith("lint ") and name.endswith(".yaml")]
    worst = max(r["median"] for r in singles) / floor
    worst_min = max(r["min"] for r in singles) / floor_min
    worst_cpu = max(r["cpu"] for r in singles) / floor_cpu
    lines += [
        "",
        "Goal (issue 10): lint of one blueprint within 1.5x of the libraries' own import time. "
        f"Worst bundled blueprint: {worst:.2f}x (median wall) / {worst_min:.2f}x (min wall) / "
        f"{worst_cpu:.2f}x (median CPU).",
        "",
    ]
    lines += [
        "Where the time goes (minimum over the runs, in-process `time.perf_counter`):",
        "",
        "| phase | one blueprint | 50 documents | 1,000 nodes |",
        "|---|---|---|---|",
    ]
    for i, name in enumerate(PHASE_NAMES):
        lines.append(
            f"| {name} | "
            + " | ".join(f"{split[k][i] * 1000:.1f} ms" for k in ("one", "folder-50", "nodes-1000"))
            + " |"
        )
    lines.append("")
    notes = ""
    if ns.output.is_file() and NOTES in ns.output.read_text():
        notes = ns.output.read_text().split(NOTES, 1)[1]
    ns.output.write_text("\n".join(lines) + ("\n" + NOTES + notes if notes else ""))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
