"""The acceptance phase's node check reads sinfo's node states as sinfo(1) defines them
(https://slurm.schedmd.com/sinfo.html, NODE STATE CODES): usable states pass, `~` (powered
down) passes, `*` (not responding), down, drained and failing nodes are named."""

from __future__ import annotations

from archform.deploy.ready import sinfo_problems


def test_usable_and_powered_down_nodes_pass() -> None:
    out = "gpu1|idle|none\ngpu2|allocated|none\ngpu3|mixed|none\ngpu4|idle~|none\n"
    assert sinfo_problems(out) == ({}, 4)


def test_each_unusable_node_is_named_with_its_state_and_reason() -> None:
    out = (
        "gpu1|idle|none\n"
        "gpu2|idle*|Not responding\n"
        "gpu3|down*|Not responding\n"
        "gpu4|drained|nhc: ib0 down\n"
        "gpu5|fail|none\n"
    )
    problems, count = sinfo_problems(out)
    assert count == 5
    assert sorted(problems) == ["gpu2", "gpu3", "gpu4", "gpu5"]
    assert problems["gpu2"] == "Slurm: not responding: Not responding"
    assert problems["gpu4"] == "Slurm: state drained: nhc: ib0 down"
    assert problems["gpu5"] == "Slurm: state fail"


def test_a_node_listed_twice_counts_once() -> None:
    # sinfo --Node prints a node once per partition it is in
    out = "gpu1|idle|none\ngpu1|idle|none\n"
    assert sinfo_problems(out) == ({}, 1)
