"""validate.yml run for real (ansible-playbook) on four stand-in compute nodes.

The nodes are local Ansible hosts with distinct inventory names. There are no GPUs, no Slurm
and no DCGM here, so `srun`, `all_reduce_perf` and `dcgmi` are STAND-INS on PATH. Their
output formats follow the vendors' source; the numbers are this test's own:
- all_reduce_perf prints the result table of NVIDIA/nccl-tests src/common.cu (v2.16.8: rows
  "%12li  %12li  %8s  %6s  %6s" then "  %7s  %6.2f  %6.2f  %5g" for out-of-place and in-place,
  '#' comment lines, "# Out of bounds values : 0 OK", "# Avg bus bandwidth    : %g"),
  only from rank 0 like the real binary (PRINT is rank-0 only).
- dcgmi diag -j prints the JSON of NVIDIA/DCGM dcgmi/Diag.cpp (v4.2.3; keys from
  nvvs/include/NvvsJsonStrings.h) and exits with DCGM_ST_NVVS_ERROR (-30, status 226) when a
  test failed (dcgmi/main_dcgmi.cpp returns the dcgmReturn_t).
- srun runs the command once per task with SLURMD_NODENAME, SLURM_STEP_NODELIST and
  SLURM_PROCID set, as srun(1) documents (https://slurm.schedmd.com/srun.html, OUTPUT
  ENVIRONMENT VARIABLES).
- mpirun takes `-np N -H host:slots,...` and `-x VAR` and gives each rank OMPI_COMM_WORLD_RANK,
  as Open MPI's mpirun(1) documents (https://docs.open-mpi.org/en/v5.0.x/man-openmpi/man1/mpirun.1.html);
  it refuses to run as root without --allow-run-as-root, which the stand-in checks too.
A node is made bad through STANDIN_FAULTS: "slow" nodes give low busbw in every run they are
part of, "dcgm" nodes fail one DCGM test, a "rails" entry makes one HCA of a node slow (runs
with NCCL_IB_HCA=<that HCA> drop to a fraction of a NIC), a "links" entry slows one pair only.
Each Ansible host runs with an interpreter wrapper that exports STANDIN_NODE, which is how the
local stand-ins know "their" node. The playbook is the one `archform generate` writes for a
bundled blueprint.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NODES = ["gpu001", "gpu002", "gpu003", "gpu004"]

SRUN = r"""#!PYTHON
import os, subprocess, sys
args = sys.argv[1:]
nodes, per_node, i = [], 1, 0
while i < len(args) and args[i].startswith("-"):
    a = args[i]
    if a == "-w":
        nodes = args[i + 1].split(","); i += 2; continue
    if a.startswith("--ntasks-per-node="):
        per_node = int(a.split("=", 1)[1])
    i += 1
command = args[i:]
if os.environ.get("STANDIN_NO_GRES") and any(a.startswith("--gpus") for a in args[:i]):
    sys.exit("srun: error: Invalid generic resource (gres) specification")
rc = 0
for node in nodes:
    for local in range(per_node):
        env = dict(os.environ, SLURMD_NODENAME=node, SLURM_STEP_NODELIST=",".join(nodes),
                   SLURM_PROCID=str(nodes.index(node) * per_node + local),
                   SLURM_NTASKS=str(len(nodes) * per_node))
        rc = max(rc, subprocess.run(command, env=env).returncode)
sys.exit(rc)
"""

MPIRUN = r"""#!PYTHON
import os, subprocess, sys
args = sys.argv[1:]
hosts, exported, i, np_ = [], [], 0, 0
flags = {"--allow-run-as-root"}
while i < len(args) and args[i].startswith("-"):
    if args[i] == "-H":
        hosts = [(h.split(":")[0], int(h.split(":")[1])) for h in args[i + 1].split(",")]; i += 2
    elif args[i] == "-np":
        np_ = int(args[i + 1]); i += 2
    elif args[i] == "-x":
        exported.append(args[i + 1]); i += 2
    elif args[i] == "--bind-to":
        i += 2
    elif args[i] in flags:
        flags.discard(args[i]); i += 1
    else:
        sys.exit("mpirun stand-in: unknown option " + args[i])
if os.geteuid() == 0 and flags:
    sys.exit("mpirun has detected an attempt to run as root (use --allow-run-as-root)")
assert np_ == sum(slots for _, slots in hosts), (np_, hosts)
nodes = ",".join(h for h, _ in hosts)
rank, rc = 0, 0
for host, slots in hosts:
    for _ in range(slots):
        env = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_") or k in exported}
        env.update(OMPI_COMM_WORLD_RANK=str(rank), OMPI_COMM_WORLD_SIZE=str(np_),
                   STANDIN_MPI_NODES=nodes)
        rc = max(rc, subprocess.run(args[i:], env=env).returncode)
        rank += 1
sys.exit(rc)
"""

ALL_REDUCE_PERF = r"""#!PYTHON
import json, os, sys
if os.environ.get("SLURM_PROCID", os.environ.get("OMPI_COMM_WORLD_RANK", "0")) != "0":
    sys.exit(0)
faults = json.load(open(os.environ["STANDIN_FAULTS"]))
args = sys.argv[1:]
def opt(flag, default):
    return args[args.index(flag) + 1] if flag in args else default
def size(text):
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
nodes = os.environ.get(
    "SLURM_STEP_NODELIST", os.environ.get("STANDIN_MPI_NODES", os.environ["STANDIN_NODE"])
).split(",")
gpus = int(opt("-g", "1"))
ranks = int(os.environ.get("SLURM_NTASKS", os.environ.get("OMPI_COMM_WORLD_SIZE", "1"))) * gpus
algo = os.environ.get("NCCL_ALGO", "")
if len(nodes) == 1:
    peak = {"NVLS": 471.3, "Ring": 362.8}.get(algo, 471.3)
else:
    peak = 366.1
hca = os.environ.get("NCCL_IB_HCA", "")
bad_rails = {faults["rails"].get(n) for n in nodes} - {None}
if len(nodes) > 1 and hca:  # one NIC carries the ring
    peak = 11.2 if hca.strip("=").split(":")[0] in bad_rails else 46.9
elif len(nodes) > 1 and bad_rails:
    peak = peak * 0.6
if set(nodes) & set(faults["slow"]):
    peak = peak / 2
if len(nodes) > 1 and sorted(nodes) in [sorted(link) for link in faults["links"]]:
    peak = peak / 3
print("# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 iters: 20 "
      "agg iters: 1 validation: 1 graph: 0" % (gpus, size(opt("-b", "8")), size(opt("-e", "8G"))))
print("#\n# Using devices")
for r in range(min(ranks, 8)):
    print("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] Stand-in GPU"
          % (r, 1000 + r, nodes[0], r, r))
print("#")
print(("# %10s  %12s  %8s  %6s  %6s           out-of-place"
       "                       in-place          ") % ("", "", "", "", ""))
print("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s"
      % ("size", "count", "type", "redop", "root",
         "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"))
print("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s"
      % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
         "(GB/s)", ""))
total, count = 0.0, 0
n = size(opt("-b", "8"))
while n <= size(opt("-e", "8G")):
    busbw = peak * n / (n + 64 * 2**20)
    algbw = busbw / (2 * (ranks - 1) / ranks) if ranks > 1 else busbw
    usec = n / (algbw * 1e3) if algbw else 1.0
    t = "%7.0f" % usec if usec >= 10000 else ("%7.1f" % usec if usec >= 100 else "%7.2f" % usec)
    print("%12d  %12d  %8s  %6s  %6s" % (n, n // 4, "float", "sum", "-1")
          + "  %7s  %6.2f  %6.2f  %5g" % (t, algbw, busbw, 0) * 2)
    total, count = total + busbw, count + 1
    n *= int(opt("-f", "2"))
print("# Out of bounds values : 0 OK")
print("# Avg bus bandwidth    : %g " % (total / count))
print("#")
"""

DCGMI = r"""#!PYTHON
import json, os, sys
faults = json.load(open(os.environ["STANDIN_FAULTS"]))
node = os.environ["STANDIN_NODE"]
assert sys.argv[1:3] == ["diag", "--run"] and "--json" in sys.argv, sys.argv
bad = node in faults["dcgm"]
def result(gpu, status, msg=None):
    out = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": gpu, "status": status}
    if msg:
        out["warnings"] = [{"warning": msg, "error_id": 95, "error_category": 6,
                            "error_severity": 2}]
    return out
memory = [result(g, "Fail" if bad and g == 3 else "Pass",
                 "Memory bandwidth below expected on GPU 3" if bad and g == 3 else None)
          for g in range(8)]
doc = {
    "DCGM Diagnostic": {"test_categories": [
        {"category": "Deployment", "tests": [
            {"name": "software", "results": [result(g, "Pass") for g in range(8)],
             "test_summary": {"status": "Pass"}}]},
        {"category": "Hardware", "tests": [
            {"name": "memory_bandwidth", "results": memory,
             "test_summary": {"status": "Fail" if bad else "Pass"}}]},
    ]},
    "entity_groups": [{"entity_group": "GPU", "entity_group_id": 1,
                       "entities": [{"entity_id": g, "device_id": "2330"} for g in range(8)]}],
    "metadata": {"version": "4.2.3", "Driver Version Detected": "570.172.08"},
}
print(json.dumps(doc, indent=3))
sys.exit(226 if bad else 0)
"""


def _inventory(tmp: Path, nodes: list[str], broken: list[str]) -> str:
    lines = ["all:", "  children:", "    compute:", "      hosts:"]
    for node in nodes:
        wrapper = tmp / "bin" / f"python-{node}"
        if node in broken:  # a host Ansible cannot run modules on
            wrapper.write_text("#!/bin/sh\necho 'node is down' >&2\nexit 1\n")
        else:
            wrapper.write_text(f'#!/bin/sh\nSTANDIN_NODE={node} exec {sys.executable} "$@"\n')
        wrapper.chmod(0o755)
        lines.append(
            f"        {node}: {{ansible_connection: local, ansible_become: false,"
            f" ansible_python_interpreter: {wrapper}}}"
        )
    return "\n".join(lines) + "\n"


def _run(
    tmp_path: Path,
    slow: list[str],
    dcgm: list[str],
    extra: dict[str, Any] | None = None,
    rails: dict[str, str] | None = None,
    links: list[list[str]] | None = None,
    blueprint: str = "onprem-h100-ib-lustre",
    nodes: list[str] = NODES,
    env_extra: dict[str, str] | None = None,
    broken: list[str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], str]:
    support.require_tool("ansible-playbook")
    loaded = load_paths([support.BLUEPRINTS / f"{blueprint}.yaml"])
    write_tree(tmp_path / "tree", build_files(loaded))
    project = tmp_path / "tree" / "ansible"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (
        ("srun", SRUN),
        ("mpirun", MPIRUN),
        ("all_reduce_perf", ALL_REDUCE_PERF),
        ("dcgmi", DCGMI),
    ):
        (bin_dir / name).write_text(text.replace("PYTHON", sys.executable, 1))
        (bin_dir / name).chmod(0o755)
    (tmp_path / "inventory.yml").write_text(_inventory(tmp_path, nodes, broken or []))
    faults = tmp_path / "faults.json"
    faults.write_text(
        json.dumps({"slow": slow, "dcgm": dcgm, "rails": rails or {}, "links": links or []})
    )
    report = tmp_path / "report"
    extra_vars = {
        "archform_nccl_tests_bin": str(bin_dir / "all_reduce_perf"),
        "validate_report_dir": str(report),
        "lustre_mounts": [],  # the stand-in nodes have no Lustre client
        **(extra or {}),
    }
    env = dict(
        os.environ,
        STANDIN_FAULTS=str(faults),
        **(env_extra or {}),
        ANSIBLE_NOCOLOR="1",
        PATH=f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}"
        f"{os.environ.get('PATH', '')}",
    )
    proc = subprocess.run(
        [
            "ansible-playbook",
            "-i",
            str(tmp_path / "inventory.yml"),
            "-e",
            json.dumps(extra_vars),
            "validate.yml",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    data = json.loads((report / "report.json").read_text()) if report.exists() else {}
    summary = (report / "summary.txt").read_text() if report.exists() else ""
    return proc, data, summary


def test_healthy_nodes_pass_every_stage(tmp_path: Path) -> None:
    proc, report, summary = _run(tmp_path, slow=[], dcgm=[])
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert report["passed"] and report["bad_nodes"] == {}, summary
    # Stage 1 on every node, per algorithm, against the published-figure floors.
    for node in NODES:
        tests = {r["test"]: r for r in report["nodes"][node]["node_tests"]}
        assert tests["nvls"]["floor_gbytes"] == 432.0 and tests["nvls"]["passed"]
        assert tests["ring"]["passed"] and tests["ring"]["busbw_gbytes"] > 300
        assert report["nodes"][node]["health"]["dcgm_diag_r2"]["passed"]
    # Stage 2: a ring of four pairs, every node in two of them; stage 3 ran once.
    assert [p["nodes"] for p in report["pairs"]] == [
        ["gpu001", "gpu002"],
        ["gpu002", "gpu003"],
        ["gpu003", "gpu004"],
        ["gpu004", "gpu001"],
    ]
    assert [r["passed"] for r in report["cluster"]] == [True]
    assert "all 4 compute nodes passed" in summary


def test_a_slow_node_is_named_and_the_cluster_run_skipped(tmp_path: Path) -> None:
    proc, report, summary = _run(tmp_path, slow=["gpu003"], dcgm=[])
    assert proc.returncode != 0
    # The node floor is not touched by a slow NIC only when the node test runs on NVLink; here
    # the stand-in slows every run of gpu003, so stage 1 already names it.
    assert list(report["bad_nodes"]) == ["gpu003"], summary
    assert "bad nodes: gpu003" in summary
    assert report["cluster"] == []  # stage 3 only runs when stages 1-2 found nothing


def test_pairs_alone_localise_the_node_both_its_pairs_share(tmp_path: Path) -> None:
    proc, report, summary = _run(
        tmp_path, slow=["gpu002"], dcgm=[], extra={"validate_stages": "pairs,cluster"}
    )
    assert proc.returncode != 0
    assert list(report["bad_nodes"]) == ["gpu002"], summary
    reasons = report["bad_nodes"]["gpu002"]
    assert reasons == [
        "stage 2 every pair with this node failed (gpu001-gpu002, gpu002-gpu003);"
        " every rail failed alone too (the node, not one NIC)"
    ]
    assert report["bad_links"] == [] and report["suspect_nodes"] == []
    assert "gpu002: stage 2 every pair with this node failed" in summary
    assert "gpu001" not in report["bad_nodes"] and "gpu003" not in report["bad_nodes"]


def test_a_dcgm_failure_names_the_node_and_keeps_it_out_of_the_pairs(tmp_path: Path) -> None:
    proc, report, summary = _run(tmp_path, slow=[], dcgm=["gpu004"])
    assert proc.returncode != 0
    assert list(report["bad_nodes"]) == ["gpu004"], summary
    assert "Hardware/memory_bandwidth GPU 3: Fail" in report["bad_nodes"]["gpu004"][0]
    # The ring closes over the three healthy nodes and all its pairs pass.
    assert [p["nodes"] for p in report["pairs"]] == [
        ["gpu001", "gpu002"],
        ["gpu002", "gpu003"],
        ["gpu003", "gpu001"],
    ]
    assert all(r["passed"] for p in report["pairs"] for r in p["results"])
    assert report["cluster"] == []  # not run across a node that failed stage 0


def test_a_bad_rail_is_named_with_its_node(tmp_path: Path) -> None:
    proc, report, summary = _run(
        tmp_path, slow=[], dcgm=[], rails={"gpu003": "mlx5_4"}, extra={"validate_stages": "pairs"}
    )
    assert proc.returncode != 0
    assert list(report["bad_nodes"]) == ["gpu003"], summary
    assert report["bad_nodes"]["gpu003"] == [
        "stage 2 every pair with this node failed (gpu002-gpu003, gpu003-gpu004);"
        " rail(s) failing in both: mlx5_4"
    ]
    # Pairs that passed were not drilled into; failing ones were, once per HCA of the blueprint.
    drilled = {tuple(p["nodes"]): len(p.get("rails", [])) for p in report["pairs"]}
    assert drilled == {
        ("gpu001", "gpu002"): 0,
        ("gpu002", "gpu003"): 8,
        ("gpu003", "gpu004"): 8,
        ("gpu004", "gpu001"): 0,
    }


def test_a_bad_link_between_two_good_nodes_is_reported_as_a_link(tmp_path: Path) -> None:
    proc, report, summary = _run(
        tmp_path, slow=[], dcgm=[], links=[["gpu001", "gpu002"]], extra={"validate_stages": "pairs"}
    )
    assert proc.returncode != 0
    assert report["bad_nodes"] == {} and report["suspect_nodes"] == [], summary
    assert [link["nodes"] for link in report["bad_links"]] == [["gpu001", "gpu002"]]
    assert "bad link between gpu001 and gpu002" in summary


def test_the_documented_cpu_recipe_runs_node_and_pair_stages_without_gpu_gres(
    tmp_path: Path,
) -> None:
    # The playbook header's recipe for a Slurm cluster without GPUs (the namespace bootstrap):
    # one rank per node, no --gpus-per-node, tests and floors given as extra-vars.
    tests = [{"name": "cpu", "algorithm": None, "floor_gbytes": 300.0}]
    proc, report, summary = _run(
        tmp_path,
        slow=["af-cpu2"],
        dcgm=[],
        blueprint="onprem-cpu-smoke",
        nodes=["af-cpu1", "af-cpu2", "af-cpu3"],
        env_extra={"STANDIN_NO_GRES": "1"},
        extra={
            "validate_stages": "node,pairs",
            "validate_gpus": 1,
            "validate_srun_gpus": False,
            "validate_node_tests": tests,
            "validate_pair_tests": tests,
        },
    )
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert list(report["bad_nodes"]) == ["af-cpu2"], summary
    assert report["bad_nodes"]["af-cpu2"][0].startswith("stage 1 intra-node all_reduce_perf")
    # The ring closes over the two good nodes, and their pair passes.
    assert [p["nodes"] for p in report["pairs"]] == [["af-cpu1", "af-cpu3"]]
    assert report["pairs"][0]["results"][0]["passed"] is True


def test_a_node_ansible_cannot_reach_is_named_not_forgotten(tmp_path: Path) -> None:
    proc, report, summary = _run(tmp_path, slow=[], dcgm=[], broken=["gpu001"])
    assert proc.returncode != 0
    assert list(report["bad_nodes"]) == ["gpu001"], summary
    assert report["bad_nodes"]["gpu001"][0].startswith("no results: unreachable")
    assert [p["nodes"] for p in report["pairs"]] == [
        ["gpu002", "gpu003"],
        ["gpu003", "gpu004"],
        ["gpu004", "gpu002"],
    ]


def test_the_mpirun_launcher_localises_the_same_way(tmp_path: Path) -> None:
    proc, report, summary = _run(
        tmp_path,
        slow=[],
        dcgm=[],
        rails={"gpu001": "mlx5_0"},
        extra={"validate_launcher": "mpirun", "validate_stages": "node,pairs"},
    )
    assert proc.returncode != 0, proc.stdout[-3000:]
    assert list(report["bad_nodes"]) == ["gpu001"], summary
    assert report["bad_nodes"]["gpu001"][0].endswith("rail(s) failing in both: mlx5_0")
    # Stage 1 ran the binary directly on each node (one process, -g 8) and passed.
    assert all(r["passed"] for n in NODES for r in report["nodes"][n]["node_tests"]), report[
        "nodes"
    ]
