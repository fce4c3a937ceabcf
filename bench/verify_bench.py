"""Wall time of `archform verify` per bundled blueprint, checks one at a time and in parallel.

    PYTHONPATH=src python bench/verify_bench.py [--jobs 1 2] [--repeat 1] [--write]

Generates every bundled blueprint into a temporary folder, then runs
`python -m archform verify DIR --jobs N --no-progress` as a fresh process for
each N (the way a user runs it) and reports the wall time (best of --repeat) and the
per-check results. `--jobs 1` is the old behaviour (one check after another). --write
rewrites bench/RESULTS-verify.md. Run it under `flock /tmp/archform-system.lock` on a
shared machine: the slurm check starts a real slurmctld.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml"))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _archform(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "archform", *args],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=1800,
        check=False,
    )


def measure(tree: Path, jobs: int, repeat: int) -> tuple[float, dict[str, int], dict[str, float]]:
    """Best wall time of `repeat` runs, result counts, and each check's own duration."""
    best = float("inf")
    counts: dict[str, int] = {}
    per_check: dict[str, float] = {}
    for _ in range(repeat):
        start = time.perf_counter()
        run = _archform("verify", str(tree), "--jobs", str(jobs), "--no-progress")
        wall = time.perf_counter() - start
        lines = [line.split() for line in run.stdout.splitlines() if line.strip()]
        statuses = [w[0].lower() for w in lines if w[0] in ("PASSED", "FAILED", "SKIPPED")]
        if wall < best:
            best = wall
            counts = {s: statuses.count(s) for s in ("passed", "failed", "skipped")}
            per_check = {w[1]: float(w[2]) for w in lines if w[0] == "TIME"}
    return best, counts, per_check


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="archform-verify-bench-") as tmp:
        for blueprint in BLUEPRINTS:
            tree = Path(tmp) / blueprint.stem
            gen = _archform("generate", str(blueprint), "-o", str(tree))
            if gen.returncode != 0:
                print(f"{blueprint.stem}: generate failed: {gen.stderr.strip()}", file=sys.stderr)
                continue
            times: dict[int, float] = {}
            counts: dict[str, int] = {}
            checks: dict[str, float] = {}
            for jobs in args.jobs:
                times[jobs], counts, per_check = measure(tree, jobs, args.repeat)
                checks = checks or per_check  # the first (sequential) run's check times
                print(f"{blueprint.stem:32} jobs={jobs} {times[jobs]:6.1f} s {counts}", flush=True)
            rows.append((blueprint.stem, counts, times, checks))
    lines = [
        "# archform verify: wall time per bundled blueprint, sequential vs parallel checks",
        "",
        "Measured by `bench/verify_bench.py` (best of "
        f"{args.repeat}; fresh `python -m archform verify DIR --jobs N` process per run).",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}.",
        "The machine is shared with other jobs, so absolute times vary between runs; compare",
        "the two columns of one row, measured back to back.",
        "",
        "The check times are those of the sequential run: with N workers the wall time",
        "cannot drop below the longest single check (or below total CPU work / free cores).",
        "",
        "| blueprint | check times, sequential run (s) | results (passed/failed/skipped) | "
        + " | ".join(f"wall, jobs={j} (s)" for j in args.jobs)
        + " | speed-up |",
        "|---|---|---|" + "---|" * len(args.jobs) + "---|",
    ]
    for stem, counts, times, checks in rows:
        res = f"{counts.get('passed', 0)}/{counts.get('failed', 0)}/{counts.get('skipped', 0)}"
        first, last = times[args.jobs[0]], times[args.jobs[-1]]
        cells = " | ".join(f"{times[j]:.1f}" for j in args.jobs)
        per = ", ".join(f"{name} {sec:.1f}" for name, sec in checks.items())
        lines.append(f"| {stem} | {per} | {res} | {cells} | {first / last:.2f}x |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        (ROOT / "bench" / "RESULTS-verify.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
