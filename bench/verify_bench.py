"""Wall time of `archform verify` per bundled blueprint, checks one at a time and in parallel.

    PYTHONPATH=src python bench/verify_bench.py [--jobs 1 2] [--repeat 1] [--write]

Generates every bundled blueprint into a temporary folder, then runs
`python -m archform verify DIR --jobs N --no-progress --format json` as a fresh process for
each N (the way a user runs it) and reports the wall time (best of --repeat) and the
per-check results. `--jobs 1` is the old behaviour (one check after another). --write
rewrites bench/RESULTS-verify.md. Run it under `flock /tmp/archform-system.lock` on a
shared machine: the slurm check starts a real slurmctld.
"""

from __future__ import annotations

import argparse
import json
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


def measure(tree: Path, jobs: int, repeat: int) -> tuple[float, dict[str, int]]:
    best = float("inf")
    counts: dict[str, int] = {}
    for _ in range(repeat):
        start = time.perf_counter()
        run = _archform(
            "verify", str(tree), "--jobs", str(jobs), "--no-progress", "--format", "json"
        )
        best = min(best, time.perf_counter() - start)
        results = json.loads(run.stdout or "[]")
        counts = {}
        for r in results:
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        counts["checks"] = len({r["check"] for r in results})
    return best, counts


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
            times = {}
            counts: dict[str, int] = {}
            for jobs in args.jobs:
                times[jobs], counts = measure(tree, jobs, args.repeat)
                print(f"{blueprint.stem:32} jobs={jobs} {times[jobs]:6.1f} s {counts}", flush=True)
            rows.append((blueprint.stem, counts, times))
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
        "| blueprint | checks | results (passed/failed/skipped) | "
        + " | ".join(f"jobs={j} (s)" for j in args.jobs)
        + " | speed-up |",
        "|---|---|---|" + "---|" * len(args.jobs) + "---|",
    ]
    for stem, counts, times in rows:
        res = f"{counts.get('passed', 0)}/{counts.get('failed', 0)}/{counts.get('skipped', 0)}"
        first, last = times[args.jobs[0]], times[args.jobs[-1]]
        cells = " | ".join(f"{times[j]:.1f}" for j in args.jobs)
        lines.append(
            f"| {stem} | {counts.get('checks', 0)} | {res} | {cells} | {first / last:.2f}x |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        (ROOT / "bench" / "RESULTS-verify.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
