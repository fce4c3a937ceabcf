"""Slurm hostlists and Linux CPU lists, against the syntax their owners publish.

- Slurm hostlist expressions: a prefix and a bracketed, comma-separated list of numbers and
  ranges, zero padding kept (`tux[0-31]`, `linux[001-003,007]`): slurm.conf(5) NodeName,
  https://slurm.schedmd.com/slurm.conf.html#OPT_NodeName, and `scontrol show hostnames`,
  https://slurm.schedmd.com/scontrol.html#OPT_hostnames.
- A range may name at most MAX_RANGE = 64*1024 hosts: `_parse_single_range()` in
  src/common/hostlist.c, https://github.com/SchedMD/slurm/blob/master/src/common/hostlist.c
- CPU lists (`0-4,9`): the "List format" of cpuset(7),
  https://man7.org/linux/man-pages/man7/cpuset.7.html
"""

from __future__ import annotations

import pytest

from archform.render.hostlist import compress, expand, int_list, int_ranges

SLURM_MAX_RANGE = 64 * 1024  # src/common/hostlist.c MAX_RANGE


@pytest.mark.parametrize(
    ("names", "expr"),
    [
        ([], ""),
        (["login"], "login"),
        (["login", "login"], "login"),
        (["login", "head", "login"], "login,head"),
        (["gpu001"], "gpu001"),
        (["gpu001", "gpu001"], "gpu001"),
        (["n1", "n2"], "n[1-2]"),
        (["n1", "n3"], "n[1,3]"),
        (["n1", "n2", "n3"], "n[1-3]"),
        (["gpu001", "gpu002", "gpu003", "gpu004", "gpu007"], "gpu[001-004,007]"),
        (["n3", "n1", "n2", "n3"], "n[1-3]"),
        (["n5", "n1", "n2", "n9", "n10", "n11"], "n[1-2,5,9],n[10-11]"),
        (["b1", "a1", "b2"], "b[1-2],a1"),
        (["n1", "n01", "n2", "n02"], "n[1-2],n[01-02]"),
        (["node102", "node103"], "node[102-103]"),
        (["rack1-node02", "rack1-node03", "rack2-node01"], "rack1-node[02-03],rack2-node01"),
        (["a-gpu001", "a-gpu002", "b", "a-gpu004"], "a-gpu[001-002,004],b"),
        (["x0", "x1", "y"], "x[0-1],y"),
        (["n1000", "n1001", "n1003"], "n[1000-1001,1003]"),
        (["n300"], "n300"),
        # a one-host group followed by others: each keeps its place
        (["gpu001", "login"], "gpu001,login"),
        (["a1", "b1", "b2", "c"], "a1,b[1-2],c"),
    ],
)
def test_compress(names: list[str], expr: str) -> None:
    assert compress(names) == expr


@pytest.mark.parametrize(
    ("count", "limit", "expr"),
    [
        (5, 2, "n[1-2,3-4,5]"),
        (4, 2, "n[1-2,3-4]"),
        (3, 3, "n[1-3]"),
        (4, 3, "n[1-3,4]"),
        (2, 1, "n[1,2]"),
    ],
)
def test_a_range_names_at_most_max_range_hosts(count: int, limit: int, expr: str) -> None:
    assert compress([f"n{i}" for i in range(1, count + 1)], max_range=limit) == expr


def test_the_default_range_limit_is_slurms_max_range() -> None:
    names = [f"gpu{i:06d}" for i in range(1, SLURM_MAX_RANGE + 2)]
    assert compress(names) == "gpu[000001-065536,065537]"
    assert compress(names[:SLURM_MAX_RANGE]) == "gpu[000001-065536]"


@pytest.mark.parametrize(
    ("expr", "names"),
    [
        ("", []),
        ("login", ["login"]),
        ("gpu001", ["gpu001"]),
        ("tux[0-3]", ["tux0", "tux1", "tux2", "tux3"]),
        ("linux[001-003,007]", ["linux001", "linux002", "linux003", "linux007"]),
        ("n[08-10]", ["n08", "n09", "n10"]),
        ("n[5]", ["n5"]),
        ("a[1-2],login,b[7,9]", ["a1", "a2", "login", "b7", "b9"]),
    ],
)
def test_expand(expr: str, names: list[str]) -> None:
    assert expand(expr) == names


@pytest.mark.parametrize(
    "names",
    [
        ["gpu001", "gpu002", "gpu009", "login", "a1", "a2", "a3"],
        [f"n{i:03d}" for i in (1, 2, 3, 5, 8, 9, 10, 200)],
    ],
)
def test_expand_undoes_compress(names: list[str]) -> None:
    assert expand(compress(names)) == names


@pytest.mark.parametrize(
    ("text", "cpus"),
    [
        ("0-4,9", {0, 1, 2, 3, 4, 9}),
        ("7", {7}),
        ("0-23,48-71", set(range(24)) | set(range(48, 72))),
        ("3,1", {1, 3}),
        ("2-3", {2, 3}),
    ],
)
def test_int_list(text: str, cpus: set[int]) -> None:
    assert int_list(text) == cpus


@pytest.mark.parametrize(
    ("values", "text"),
    [
        ([0, 1, 2, 5], "0-2,5"),
        ([3], "3"),
        ([1, 3], "1,3"),
        ([0, 1], "0-1"),
        ([0, 1, 2, 3, 4, 9], "0-4,9"),
        ([*range(24), *range(48, 72)], "0-23,48-71"),
        # past 256 (CPython caches small ints only): a 448-vCPU host's upper half
        ([*range(256, 448)], "256-447"),
        ([300, 301, 303], "300-301,303"),
    ],
)
def test_int_ranges(values: list[int], text: str) -> None:
    assert int_ranges(values) == text
    assert int_list(text) == set(values)
