"""STO007: the message tells the same path from nesting, and each entry is reported once.

The rule's doc: it flags a mount that "equals, or lies inside or above, another entry's
mount" (ParallelCluster's DuplicateMountDirValidator vs OverlappingMountDirValidator draw the
same line), so the message says which of the two it is.
"""

from __future__ import annotations

import pytest
from rulecase import findings


def _blueprint(*mounts: str) -> str:
    rows = "\n".join(
        f"  - {{name: s{i}, kind: lustre, purpose: scratch, capacity_tib: 10, mount: {m}}}"
        for i, m in enumerate(mounts)
    )
    return f"""version: 1
kind: TrainingCluster
name: mounts
placement: {{provider: onprem, region: lab}}
compute: {{nodes: 1, gpu: {{model: H100, per_node: 8}}}}
fabric: {{kind: ethernet, gbps_per_node: 100}}
storage:
{rows}
"""


CASES = [
    (("/data", "/data"), "the same path as"),
    (("/data", "/data/"), "the same path as"),
    (("/data/", "/data"), "the same path as"),
    (("/data", "/data/sub"), "nested with"),
    (("/data/sub", "/data"), "nested with"),
    (("/a/b", "/a"), "nested with"),
    (("/a", "/a/b"), "nested with"),
]


@pytest.mark.parametrize(("mounts", "how"), CASES)
def test_sto007_message_says_same_or_nested(mounts: tuple[str, str], how: str) -> None:
    (finding,) = findings("STO007", _blueprint(*mounts))
    first, second = mounts
    assert finding.message.startswith(f"mount {second} of 's1' is {how} {first} of 's0';")


def test_sto007_reports_each_entry_once_against_the_first_overlap() -> None:
    # /data/x/y lies inside both /data and /data/x: one finding for it, naming /data
    got = findings("STO007", _blueprint("/data", "/data/x", "/data/x/y"))
    assert [(f.line, f.message.split(";")[0]) for f in got] == [
        (9, "mount /data/x of 's1' is nested with /data of 's0'"),
        (10, "mount /data/x/y of 's2' is nested with /data of 's0'"),
    ]
