"""`archform diagram`: Mermaid and DOT for every bundled blueprint, goldens, safety.

The Graphviz-rendered SVG/PNG are tested in test_graphviz.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archform.diagram import build, to_dot, to_mermaid
from archform.diagram.mermaid import label
from archform.spec import load_paths, load_text
from diagram.mermaid_subset import MermaidError, decode, parse
from support import BLUEPRINTS, GOLDENS, bundled_blueprints, compare_tree, run_cli

BUNDLED = bundled_blueprints()


def _render(path: Path) -> tuple[str, str]:
    graph = build(load_paths([path]))
    return to_mermaid(graph), to_dot(graph)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_bundled_blueprint_is_valid_mermaid(path: Path) -> None:
    chart = parse(_render(path)[0])
    assert chart.nodes and chart.subgraphs and chart.edges
    # every node sits inside some subgraph: nothing floats outside the tiers
    assert all(parent is not None for parent in chart.parent.values())


def test_goldens(update_goldens: bool) -> None:
    tree: dict[str, bytes] = {}
    for path in BUNDLED:
        mermaid, dot = _render(path)
        tree[f"{path.stem}.mmd"] = mermaid.encode("utf-8")
        # the DOT source is ours and deterministic; the SVG Graphviz makes from it depends on
        # the Graphviz version, so test_graphviz.py checks its structure instead of bytes
        tree[f"{path.stem}.dot"] = dot.encode("utf-8")
    compare_tree(tree, GOLDENS / "diagram", update_goldens)


def test_platform_shows_tiers_registry_and_promotion() -> None:
    chart = parse(_render(BLUEPRINTS / "platform-two-tier.yaml")[0])
    titles = {decode(lbl).split("\n")[0] for lbl, _ in chart.subgraphs.values()}
    assert {"Training tier", "Model registry", "Serving tier"} <= titles
    assert {"region us-east-1", "region eu-west-1", "region ap-northeast-1"} <= titles
    nodes = {i: decode(lbl) for i, (_, lbl) in chart.nodes.items()}
    (registry,) = [i for i, text in nodes.items() if "bucket sivaro-models" in text]
    promote = [e for e in chart.edges if e[3] == registry]
    assert len(promote) == 1
    src, arrow, edge_label, _ = promote[0]
    assert arrow == "==>" and decode(edge_label or "") == "promote (manual approval)"
    assert nodes[src].startswith("checkpoints: lustre")
    pulls = [e for e in chart.edges if e[0] == registry]
    assert len(pulls) == 3 and all(e[1] == "-.->" for e in pulls)
    assert all("model server" in nodes[e[3]] for e in pulls)


def test_training_cluster_shows_groups_gpus_fabric_storage_scheduler() -> None:
    chart = parse(_render(BLUEPRINTS / "onprem-h100-ib-lustre.yaml")[0])
    text = "\n".join(decode(lbl) for _, lbl in chart.nodes.values())
    for expected in (
        "gpu: 32 x on-prem node",
        "8 x H100 per node = 256 GPUs",
        "fabric: infiniband",
        "3200 Gbps/node, 8 rails",
        "topology: rail optimized",
        "datasets: lustre",
        "training data",
        "1000 TiB",
        "Slurm",
    ):
        assert expected in text
    subgraphs = "\n".join(decode(lbl) for lbl, _ in chart.subgraphs.values())
    assert "onprem site dc-east" in subgraphs


HOSTILE = 'x"]; end\nsubgraph z["%% <b>#quot;`|{}</b>'


def _hostile_text() -> str:
    text = (BLUEPRINTS / "platform-two-tier.yaml").read_text("utf-8")
    quoted = HOSTILE.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return text.replace(
        "description: Tier 1 - 8 x p5.48xlarge on EFA with FSx for Lustre",
        f'description: "{quoted}"',
        1,
    )


def test_hostile_description_stays_inert_in_mermaid() -> None:
    benign = parse(to_mermaid(build(load_paths([BLUEPRINTS / "platform-two-tier.yaml"]))))
    hostile_text = _hostile_text()
    assert HOSTILE.split("\n")[0] not in (BLUEPRINTS / "platform-two-tier.yaml").read_text()
    chart = parse(to_mermaid(build(load_text(hostile_text, "hostile.yaml"))))
    assert chart.nodes.keys() == benign.nodes.keys()
    assert chart.subgraphs.keys() == benign.subgraphs.keys()
    assert chart.edges == benign.edges
    titles = [decode(lbl) for lbl, _ in chart.subgraphs.values()]
    assert any(t.endswith(" ".join(HOSTILE.split())) for t in titles)


@pytest.mark.parametrize(
    "text",
    [
        'a"b',
        "a]b",
        "a[b",
        "a#b",
        "a;b",
        "a|b",
        "a\nb",
        "a<b>",
        "a%%b",
        "a`b",
        "a(b)",
        "a{b}",
        "a&b",
    ],
)
def test_label_escaping_round_trips_every_special_character(text: str) -> None:
    escaped = label(text)
    chart = parse(f'flowchart LR\n    subgraph g ["t"]\n        n_a["{escaped}"]\n    end\n')
    expected = text.replace("\n", " ")
    assert decode(chart.nodes["n_a"][1]) == expected


@pytest.mark.parametrize(
    "bad",
    [
        "graph TD\n",
        'flowchart LR\n    subgraph g ["t"]\n',
        "flowchart LR\n    end\n",
        'flowchart LR\n    n_a["x"]\n    n_a --> n_b\n',
        'flowchart LR\n    n_a["say "hi""]\n',
        'flowchart LR\n    n_a["a;b"]\n',
        'flowchart LR\n    n_a["a#b"]\n',
        'flowchart LR\n    n_a["x"]\n    n_a["y"]\n',
        'flowchart LR\n    n_a["x"]\n    n_a --- n_a\n',
        'flowchart LR\n    n_a["x"]\n    click n_a call alert()\n',
        'flowchart LR\n    end["x"]\n',
        'flowchart LR\n    n_a["x"]\n    n_a -->|unquoted| n_a\n',
        "flowchart LR\n    direction TB\n",
    ],
)
def test_parser_rejects_anything_outside_the_subset(bad: str) -> None:
    with pytest.raises(MermaidError):
        parse(bad)


def test_cli_writes_file_and_rejects_bad_input(tmp_path: Path) -> None:
    out = tmp_path / "d" / "arch.dot"
    result = run_cli(
        ["diagram", str(BLUEPRINTS / "aws-p5-efa-fsx.yaml"), "--format", "dot", "-o", str(out)]
    )
    assert result.returncode == 0, result.stderr
    assert out.read_text("utf-8").startswith("digraph architecture {")
    stdout = run_cli(["diagram", str(BLUEPRINTS / "aws-p5-efa-fsx.yaml")])
    assert stdout.returncode == 0 and parse(stdout.stdout).nodes
    assert (
        run_cli(["diagram", str(BLUEPRINTS / "aws-p5-efa-fsx.yaml"), "--format", "jpeg"]).returncode
        == 2
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nkind: Nope\n", "utf-8")
    result = run_cli(["diagram", str(bad)])
    assert result.returncode == 2 and "bad.yaml:" in result.stderr


def test_each_node_group_is_drawn_with_its_own_fabric_bandwidth() -> None:
    # The bundled p5 cluster with a p4d group (EFA at 400 Gbps) and a CPU debug group
    # (m6i: no EFA, 12.5 Gbps Ethernet) beside the 16 x p5.48xlarge (EFA at 3200 Gbps).
    text = (BLUEPRINTS / "aws-p5-efa-fsx.yaml").read_text("utf-8")
    anchor = (
        "  purchase: capacity_block     # EC2 Capacity Blocks for ML: reserved, never interrupted\n"
    )
    assert anchor in text
    extra = (
        "  extra_groups:\n"
        "    - {name: old, nodes: 2, instance_type: p4d.24xlarge}\n"
        "    - {name: debug, nodes: 1, instance_type: m6i.2xlarge}\n"
    )
    chart = parse(to_mermaid(build(load_text(text.replace(anchor, anchor + extra), "mixed.yaml"))))
    nodes = {i: decode(lbl).split("\n")[0] for i, (_, lbl) in chart.nodes.items()}
    (fabric,) = [i for i, first in nodes.items() if first == "fabric: efa"]
    links = {
        nodes[src].split(":")[0]: (arrow, decode(label or ""))
        for src, arrow, label, dst in chart.edges
        if dst == fabric
    }
    assert links == {
        "gpu": ("==>", "3200 Gbps"),
        "old": ("==>", "400 Gbps"),
        "debug": ("-->", "ethernet 12.5 Gbps"),
    }
