"""NET004 (missing-placement): the message and hint for unreserved and part-reserved clusters.

Expected text is worked from the blueprint and the rule's doc: AWS co-locates with "a cluster
placement group" (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/placement-groups.html),
and a Capacity Block places its own nodes
(https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/cr-cpg.html), so only the other groups'
nodes are counted as unplaced.
"""

from __future__ import annotations

from rulecase import findings

HEAD = """\
version: 1
kind: TrainingCluster
name: demo
placement:
  provider: aws
  region: us-east-1
  zones: [us-east-1a]
  colocation: none
compute:
  nodes: 2
  instance_type: p5.48xlarge
"""

BLOCK = "  purchase: capacity_block\n  capacity_reservation_id: cr-0123456789abcdef0\n"


def test_unreserved_cluster_counts_every_node() -> None:
    text = HEAD.replace("nodes: 2", "nodes: 3") + (
        "  extra_groups:\n    - {name: more, nodes: 2, instance_type: p5.48xlarge}\n"
    )
    (f,) = findings("NET004", text)
    # 3 + 2 nodes, none reserved
    assert f.message == (
        "5 aws nodes with colocation 'none'; expected 'cluster' (a cluster placement group)"
    )
    assert f.hint == "set placement.colocation: cluster"
    assert f.line == 8


def test_part_reserved_cluster_counts_only_the_unreserved_nodes() -> None:
    # the primary group (2 nodes) is a Capacity Block; the 3 on-demand nodes are unplaced
    text = (
        HEAD + BLOCK + "  extra_groups:\n    - {name: od, nodes: 3, instance_type: p5.48xlarge}\n"
    )
    (f,) = findings("NET004", text)
    assert f.message == (
        "3 aws nodes outside a reservation with colocation 'none'; expected 'cluster' "
        "(a cluster placement group)"
    )
    assert f.hint == (
        "set placement.colocation: cluster (the reserved group(s) gpu stay out of the "
        "placement group: their reservation places them)"
    )


def test_many_reserved_groups_stay_silent() -> None:
    # 300 Capacity Block groups: every node is placed by its reservation, whatever the count
    # (group counts above 256 are distinct int objects in CPython: compared by value).
    extra = "".join(
        f"    - {{name: g{i}, nodes: 1, instance_type: p5.48xlarge, "
        "purchase: capacity_block, capacity_reservation_id: cr-0123456789abcdef0}\n"
        for i in range(299)
    )
    text = HEAD + BLOCK + "  extra_groups:\n" + extra
    assert findings("NET004", text) == []
