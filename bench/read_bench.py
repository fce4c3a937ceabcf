"""Benchmark reading blueprints with positions (`archform.spec.source.parse_documents`).

Cases (each read in this process, best of --repeat, the garbage collector as in normal use):
  inventory-1mb / -5mb / -10mb  an on-prem TrainingCluster whose `hosts.compute` inventory
                                makes the file 1, 5 and 10 MB (one flow mapping per host)
  comments-3mb                  a bundled blueprint followed by 3 MB of comment lines
  aliases-100k (mappings)       one anchored mapping referenced 100,000 times (200,000 nodes
                                after expansion: within the alias budget, read)
  aliases-300k (scalars)        300,000 aliases of one scalar (beyond the budget: refused)
  ruamel-1mb                    the 1 MB inventory through ruamel's pure-Python composer,
                                the path every read took before (and still takes on errors)

Reports seconds, MB and seconds per MB, and the spread of s/MB across the 1/5/10 MB files
(linear reading keeps it within 2x).

Usage: python bench/read_bench.py [--repeat 3] [--output bench/RESULTS-read.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from archform.spec.errors import SpecError  # noqa: E402
from archform.spec.source import (  # noqa: E402
    MAX_NODES,
    _compose_with_ruamel,
    parse_documents,
)

NOTES = "<!-- notes: kept when the table above is regenerated -->"
BASE = (ROOT / "blueprints" / "onprem-h100-ib-lustre.yaml").read_text().rstrip() + "\n"


def inventory(megabytes: float) -> str:
    """The on-prem blueprint with a host inventory long enough for `megabytes` MB."""
    lines = [BASE.rstrip(), "hosts:", "  controller: {name: ctl01, address: 10.0.0.2}"]
    lines.append("  compute:")
    size = sum(len(x) + 1 for x in lines)
    i = 0
    while size < megabytes * 1e6:
        line = f"    - {{name: node{i:06d}, address: 10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}}}"
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines) + "\n"


def comments(megabytes: float) -> str:
    filler = "# " + "commented-out host inventory line " * 2 + "\n"
    return BASE + filler * int(megabytes * 1e6 / len(filler))


def aliases(count: int, scalar: bool) -> str:
    if scalar:
        return BASE + "x_labels: [&v value, " + ", ".join(["*v"] * count) + "]\n"
    return BASE + "x_defaults: &d {a: 1}\nx_groups: [" + ", ".join(["*d"] * count) + "]\n"


def best(func: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def read(text: str) -> str:
    try:
        parse_documents(text, "bench.yaml")
    except SpecError as exc:
        return "refused: " + exc.problems[0].message
    return "read"


def machine() -> str:
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
    """Run the cases and write the Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", type=Path, default=ROOT / "bench" / "RESULTS-read.md")
    ns = parser.parse_args()
    cases: list[tuple[str, str, Callable[[str], object]]] = [
        ("inventory-1mb", inventory(1), read),
        ("inventory-5mb", inventory(5), read),
        ("inventory-10mb", inventory(10), read),
        ("comments-3mb", comments(3), read),
        ("aliases-100k (mappings)", aliases(100_000, scalar=False), read),
        ("aliases-300k (scalars)", aliases(300_000, scalar=True), read),
        ("ruamel-1mb (the old path)", inventory(1), _compose_with_ruamel),
    ]
    rows = []
    per_mb: dict[str, float] = {}
    for name, text, func in cases:
        outcome = str(func(text)) if func is read else "composed"
        seconds = best(lambda text=text, func=func: func(text), ns.repeat)  # type: ignore[misc]
        mb = len(text.encode()) / 1e6
        per_mb[name] = seconds / mb
        rows.append(f"| {name} | {mb:.2f} | {seconds:.2f} | {seconds / mb:.2f} | {outcome} |")
        print(rows[-1], flush=True)
    sizes = [per_mb[f"inventory-{n}mb"] for n in (1, 5, 10)]
    spread = max(sizes) / min(sizes)
    text = "\n".join(
        [
            "# Reading benchmark (bench/read_bench.py)",
            "",
            f"Machine: {machine()}; best of {ns.repeat}; in-process `parse_documents` "
            "(YAML -> plain data + every key's and value's line:column).",
            f"Alias budget: {MAX_NODES:,} nodes reached through aliases per file.",
            "",
            "| case | MB | seconds | s per MB | outcome |",
            "|---|---|---|---|---|",
            *rows,
            "",
            f"Spread of s/MB across the 1, 5 and 10 MB inventories: {spread:.2f}x "
            "(linear within 2x).",
            "",
        ]
    )
    if ns.output.exists() and NOTES in ns.output.read_text():
        text += "\n" + NOTES + ns.output.read_text().split(NOTES, 1)[1]
    ns.output.write_text(text)
    print(f"spread {spread:.2f}x; wrote {ns.output}")


if __name__ == "__main__":
    main()
