"""Scale to archform's maximum (100,000 nodes) with hostlists Slurm accepts.

Facts from Slurm's source (https://github.com/SchedMD/slurm):
- src/common/hostlist.c `_parse_single_range`: a range naming more than MAX_RANGE hosts is
  refused ("Too many hosts in range"); MAX_RANGE is 64*1024 = 65536 in every release
  (hostlist.c in 22.05, `MAX_SLURM_NODES` from slurm/slurm.h since 24.11).
- From 24.11 (commit 2e53599e79, "Do not let slurmctld/slurmd start if too many nodes in
  slurm.conf") create_node_record_at() in src/common/node_conf.c refuses node records past
  MAX_SLURM_NODES, so 100,000 nodes need a release before 24.11.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import support
from archform.render.generate import build_files
from archform.render.hostlist import compress, expand
from archform.render.writer import write_tree
from archform.spec import load_paths
from archform.verify.checks import slurm as slurm_check
from archform.verify.checks import slurm_parsers

SLURM_MAX_RANGE = 65536  # hostlist.c MAX_RANGE (64*1024)
FIXTURE = Path(__file__).parents[1] / "render" / "ansible" / "fixtures" / "scale-100000.yaml"
RANGE = re.compile(r"(\d+)-(\d+)")


def _largest_range(expr: str) -> int:
    return max((int(b) - int(a) + 1 for a, b in RANGE.findall(expr)), default=1)


def test_a_range_never_names_more_hosts_than_slurm_accepts() -> None:
    exact = [f"n{i:06d}" for i in range(1, SLURM_MAX_RANGE + 1)]
    assert compress(exact) == "n[000001-065536]"
    one_more = [*exact, f"n{SLURM_MAX_RANGE + 1:06d}"]
    assert compress(one_more) == "n[000001-065536,065537]"
    names = [f"gpu{i:06d}" for i in range(1, 100_001)]
    expr = compress(names)
    assert expr == "gpu[000001-065536,065537-100000]"
    assert expand(expr) == names


def _generated(version: str | None = None) -> dict[str, str]:
    loaded = load_paths([FIXTURE])
    files = build_files(loaded)
    return {f.path: f.content.decode() for f in files if f.path.endswith(".conf")}


def test_100000_nodes_validate_and_generate_with_short_ranges() -> None:
    files = _generated()
    conf = next(text for path, text in files.items() if path.endswith("slurm/files/slurm.conf"))
    lists = [
        line.split()[0].split("=", 1)[1]
        for line in conf.splitlines()
        if line.startswith(("NodeName=", "PartitionName="))
    ]
    nodes = [h for line in conf.splitlines() if line.startswith("NodeName=") for h in
             expand(line.split()[0].split("=", 1)[1])]  # fmt: skip
    assert len(nodes) == 100_000 == len(set(nodes))
    part = next(line for line in conf.splitlines() if line.startswith("PartitionName="))
    assert len(expand(part.split()[1].split("=", 1)[1])) == 100_000
    assert all(_largest_range(expr) <= SLURM_MAX_RANGE for expr in lists)
    topo = next(text for path, text in files.items() if path.endswith("files/topology.conf"))
    assert all(_largest_range(line) <= SLURM_MAX_RANGE for line in topo.splitlines())


def test_more_nodes_than_24_11_holds_is_refused_at_validate_with_a_position(
    tmp_path: Path,
) -> None:
    text = FIXTURE.read_text()
    bad = tmp_path / "too-big.yaml"
    bad.write_text(re.sub(r'version: "24.05"[^\n]*', 'version: "24.11"', text))
    proc = support.run_cli(["validate", str(bad)])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.startswith("compute:"))
    assert re.search(
        rf"too-big.yaml:{line}:\d+: error: compute: 100000 nodes exceed the 65536", out
    ), out
    assert "Traceback" not in out


@pytest.mark.integration
@pytest.mark.slow
def test_100000_node_cluster_comes_up_in_a_real_slurmctld(tmp_path: Path) -> None:
    """Every node listed by `scontrol show node`; every leaf switch by `show topology`."""
    parsers = [p for p in slurm_parsers.installed() if p.version.release < "24.11"]
    if not parsers:
        reason = "needs a slurmctld before 24.11 (Debian 12: apt-get install slurmctld)"
        if support.REQUIRE_TOOLS:
            pytest.fail(f"ARCHFORM_REQUIRE_TOOLS=1 but {reason}")
        pytest.skip(reason)
    out = tmp_path / "scale"
    write_tree(out, build_files(load_paths([FIXTURE])))
    results = slurm_check.run_check(out)
    failed = [r for r in results if r.status != "passed"]
    assert not failed, failed
    details = {r.artifact.rsplit(" ", 1)[-1]: r.detail for r in results}
    assert "100000 of 100000 nodes with the blueprint's GRES" in details["GRES)"]
    assert "3125 leaf switch(es) loaded, blueprint has 3125" in details["(topology)"]
    versions = details["(versions)"]
    assert "declared Slurm 24.05" in versions
    if any(p.version.release >= "24.11" for p in slurm_parsers.installed()):
        assert "holds at most 65536 nodes" in versions
