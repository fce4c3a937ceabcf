"""Generation time and output size of the Ansible project for large clusters.

    PYTHONPATH=src python bench/generate_bench.py [--repeat N] [--write]

Loads each scale blueprint, renders every file in memory (archform.render.generate.
build_files: the work `archform generate` does before writing) and reports the best of N
wall-clock times and the total bytes. --write rewrites bench/RESULTS-generate.md.
Goal (issue 4): under 1 s and under 2 MB for 1,024 nodes.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "render" / "ansible" / "fixtures"
CASES = [("scale-1024", 1024), ("scale-8192", 8192)]


def measure(name: str, repeat: int) -> dict[str, float]:
    from archform.render.generate import build_files
    from archform.spec import load_paths

    path = FIXTURES / f"{name}.yaml"
    best_total = best_render = float("inf")
    size = files = 0
    ansible_size = 0
    for _ in range(repeat):
        start = time.perf_counter()
        loaded = load_paths([path])
        mid = time.perf_counter()
        out = build_files(loaded)
        end = time.perf_counter()
        best_total = min(best_total, end - start)
        best_render = min(best_render, end - mid)
        size = sum(len(f.content) for f in out)
        ansible_size = sum(len(f.content) for f in out if f.path.startswith("ansible/"))
        files = len(out)
    return {
        "total_s": best_total,
        "render_s": best_render,
        "bytes": size,
        "ansible_bytes": ansible_size,
        "files": files,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = []
    for name, nodes in CASES:
        m = measure(name, args.repeat)
        rows.append((name, nodes, m))
        print(
            f"{name}: load+render {m['total_s']:.3f} s (render {m['render_s']:.3f} s), "
            f"{m['files']:.0f} files, {m['bytes'] / 1e6:.3f} MB"
        )
    if args.write:
        lines = [
            "# Generation benchmark (bench/generate_bench.py)",
            "",
            f"Machine: {platform.machine()}, Python {platform.python_version()}, "
            f"{platform.system()}; best of {args.repeat}; in-memory `build_files` (no disk).",
            "Goal: under 1 s and under 2 MB for 1,024 nodes.",
            "",
            "| blueprint | nodes | load + render (s) | render only (s) | files | output (MB) "
            "| ansible/ (MB) |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, nodes, m in rows:
            lines.append(
                f"| {name} | {nodes:,} | {m['total_s']:.3f} | {m['render_s']:.3f} | "
                f"{m['files']:.0f} | {m['bytes'] / 1e6:.3f} | {m['ansible_bytes'] / 1e6:.3f} |"
            )
        (ROOT / "bench" / "RESULTS-generate.md").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    sys.exit(main())
