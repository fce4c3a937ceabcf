#!/usr/bin/python3
"""CPU stand-in for nccl-tests' all_reduce_perf (no GPUs on the CI machine).

A real measurement, not a table of made-up numbers: every rank (one per Slurm task, wired up
by Slurm's PMIx plugin through mpi4py on Open MPI) runs MPI_Allreduce (sum of float32) over
the message sizes -b .. -e (factor -f), out-of-place and in-place, checks the result, and
rank 0 prints the rows in nccl-tests' own format (NVIDIA/nccl-tests src/common.cu, v2.16.8:
"%12li  %12li  %8s  %6s  %6s" size, count, type, redop, root, then per out-of-place and
in-place "  %7s  %6.2f  %6.2f  %5g" time in us, algbw, busbw in GB/s, #wrong), with busbw =
algbw x 2(n-1)/n for n ranks (nccl-tests doc/PERFORMANCE.md). With one rank (validate.yml's
per-node stage), where nccl-tests' factor is 0, it prints algbw as busbw: the node's own
reduction bandwidth. A node is degraded on purpose by a file `degraded` beside this program
(the node's private folder): each iteration then also sleeps DELAY seconds, so every
measurement that includes that node is really that slow.
"""

from __future__ import annotations

import array
import sys
import time
from pathlib import Path

from mpi4py import MPI

ITERS = 3
DELAY = 2.0


def opt(args: list[str], flag: str, default: str) -> str:
    return args[args.index(flag) + 1] if flag in args else default


def size(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def timed(comm: MPI.Comm, nbytes: int, in_place: bool, delay: float) -> tuple[float, int]:
    """Seconds per allreduce (slowest rank) and wrong elements on this rank."""
    rank, ranks = comm.Get_rank(), comm.Get_size()
    count = nbytes // 4
    expected = ranks * (ranks + 1) / 2
    send = array.array("f", [float(rank + 1)]) * count
    recv = array.array("f", bytes(nbytes))
    elapsed = 0.0
    for i in range(ITERS + 1):  # the first is the warm-up
        buf = array.array("f", send) if in_place else recv
        comm.Barrier()
        start = time.perf_counter()
        if in_place:
            comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
        else:
            comm.Allreduce(send, buf, op=MPI.SUM)
        if delay:
            time.sleep(delay)
        if i:
            elapsed += time.perf_counter() - start
    wrong = sum(1 for v in buf if v != expected)
    return comm.allreduce(elapsed / ITERS, op=MPI.MAX), comm.allreduce(wrong, op=MPI.SUM)


def cell(seconds: float, nbytes: int, ranks: int, wrong: int) -> str:
    usec = seconds * 1e6
    algbw = nbytes / seconds / 1e9
    busbw = algbw * 2 * (ranks - 1) / ranks if ranks > 1 else algbw
    text = f"{usec:7.0f}" if usec >= 10000 else (f"{usec:7.1f}" if usec >= 100 else f"{usec:7.2f}")
    return f"  {text}  {algbw:6.2f}  {busbw:6.2f}  {wrong:5g}"


def main() -> None:
    args = sys.argv[1:]
    comm = MPI.COMM_WORLD
    first, last, factor = (
        size(opt(args, "-b", "8")),
        size(opt(args, "-e", "8M")),
        int(opt(args, "-f", "2")),
    )
    delay = DELAY if (Path(__file__).resolve().parent / "degraded").exists() else 0.0
    ranks, root = comm.Get_size(), comm.Get_rank() == 0
    if root:
        print(f"# CPU stand-in for all_reduce_perf: {ranks} ranks, bytes {first}..{last}")
        print("#       size         count      type   redop    root  out-of-place  in-place")
    nbytes, total, rows = max(first, 4), 0.0, 0
    while nbytes <= last:
        out_s, out_wrong = timed(comm, nbytes, False, delay)
        in_s, in_wrong = timed(comm, nbytes, True, delay)
        if root:
            head = f"{nbytes:12d}  {nbytes // 4:12d}  {'float':>8}  {'sum':>6}  {-1:6d}"
            print(
                head + cell(out_s, nbytes, ranks, out_wrong) + cell(in_s, nbytes, ranks, in_wrong)
            )
            algbw = nbytes / out_s / 1e9
            total += algbw * 2 * (ranks - 1) / ranks if ranks > 1 else algbw
            rows += 1
        nbytes *= factor
    if root:
        print("# Out of bounds values : 0 OK")
        print(f"# Avg bus bandwidth    : {total / max(rows, 1):g} ")


if __name__ == "__main__":
    main()
