"""Generate and verify time and peak memory at 1k, 32k and 100k nodes (issue 15 item 6).

    PYTHONPATH=src python bench/scale_bench.py [--sizes 1024,32768,100000] [--write]

Each measurement runs in a fresh process: `generate` = load + validate + render every file
(archform.render.generate.build_files) + atomic write; `verify` = the Slurm check of
`archform verify` on that tree (real slurmctld from the installed parsers: sandbox start,
UP, log, `scontrol show node` of every node, `scontrol show topology`). Peak RSS is the
largest resident set of the process and its waited-for children (ru_maxrss of
RUSAGE_SELF/RUSAGE_CHILDREN: archform, slurmctld, scontrol). --write rewrites
bench/RESULTS-scale.md.
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
FIXTURES = ROOT / "tests" / "render" / "ansible" / "fixtures"
FIXTURE_OF = {1024: "scale-1024", 32768: "scale-32768", 100000: "scale-100000"}

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
phase, src, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
start = time.perf_counter()
if phase == "generate":
    from archform.render.generate import build_files
    from archform.render.writer import write_tree
    from archform.spec import load_paths
    write_tree(out, build_files(load_paths([src])))
    detail = ""
else:
    from archform.verify.checks import slurm
    results = slurm.run_check(out)
    bad = [r for r in results if r.status != "passed"]
    detail = "; ".join(f"{r.artifact}: {r.detail[:160]}" for r in bad) or "; ".join(
        r.detail for r in results if r.artifact.endswith(("(nodes, GRES)", "(versions)")))
elapsed = time.perf_counter() - start
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"s": elapsed, "self_mib": own / 1024, "child_mib": kids / 1024,
                  "detail": detail}))
"""


def measure(phase: str, src: Path, out: Path) -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, phase, str(src), str(out)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1024,32768,100000")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        src = FIXTURES / f"{FIXTURE_OF[size]}.yaml"
        with tempfile.TemporaryDirectory(prefix="archform-bench-") as tmp:
            out = Path(tmp) / "out"
            gen = measure("generate", src, out)
            ver = measure("verify", src, out)
        rows.append((size, gen, ver))
        print(
            f"{size:>7} nodes: generate {gen['s']:.2f} s {gen['self_mib']:.0f} MiB; "
            f"verify {ver['s']:.1f} s, archform {ver['self_mib']:.0f} MiB, "
            f"slurmctld/scontrol {ver['child_mib']:.0f} MiB; {ver['detail']}",
            flush=True,
        )
    if args.write:
        lines = [
            "# Scale benchmark (bench/scale_bench.py)",
            "",
            f"Machine: {platform.machine()}, Python {platform.python_version()}, "
            f"{platform.system()}; {os.cpu_count()} vCPUs shared with other sessions "
            f"(load average at the start: {os.getloadavg()[0]:.1f}); {time.strftime('%Y-%m-%d')}.",
            "One fresh process per cell; verify = the Slurm check of `archform verify`",
            "(real slurmctld, every node listed, leaf switches compared).",
            "",
            "| nodes | generate (s) | generate peak RSS (MiB) | verify (s) | "
            "verify archform RSS (MiB) | slurmctld/scontrol peak RSS (MiB) | verify result |",
            "|---|---|---|---|---|---|---|",
        ]
        for size, gen, ver in rows:
            lines.append(
                f"| {size:,} | {gen['s']:.2f} | {gen['self_mib']:.0f} | {ver['s']:.1f} | "
                f"{ver['self_mib']:.0f} | {ver['child_mib']:.0f} | {ver['detail']} |"
            )
        (ROOT / "bench" / "RESULTS-scale.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
