"""The deploy Pulumi phase (issue 24 mutant: nothing tested `run_pulumi`).

`run_pulumi` is driven through its Automation API seam (`up`): the stand-in plays the part
of `pulumi up` and returns stack outputs, and the phase must hand them on: one JSON per
project in the state folder, and the training project's outputs file that the generated
Ansible inventory reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console

import support
from archform.deploy import build_plan
from archform.deploy.phases import Context, PulumiProject, run_pulumi
from archform.deploy.progress import Reporter
from archform.spec import load_paths

AWS = support.BLUEPRINTS / "aws-p5-efa-fsx.yaml"


def test_run_pulumi_writes_each_projects_stack_outputs(tmp_path: Path) -> None:
    loaded = load_paths([AWS])
    docs = list(loaded.documents)
    plan = build_plan(loaded, docs, tmp_path / "out", stack="ci")
    ctx = Context(plan, loaded, docs, Reporter(Console(record=True, width=120), None))
    calls: list[tuple[str, dict[str, str]]] = []

    def up(c: Context, project: PulumiProject, config: dict[str, str]) -> dict[str, Any]:
        assert c is ctx
        calls.append((project.path, dict(config)))
        return {
            "head_ip": "10.0.0.5",
            "project": project.path,
            "nodes": [f"n{i}" for i in range(3)],
        }

    run_pulumi(ctx, up)
    assert [path for path, _ in calls] == [p.path for p in plan.pulumi] and calls
    for project in plan.pulumi:
        want = {"head_ip": "10.0.0.5", "project": project.path, "nodes": ["n0", "n1", "n2"]}
        saved = plan.state_dir / "outputs" / f"{project.document}-{project.role}.json"
        assert json.loads(saved.read_text()) == want
        if project.outputs_file is not None:
            assert json.loads((plan.out_dir / project.outputs_file).read_text()) == want
    assert any(p.outputs_file for p in plan.pulumi), "the training project feeds Ansible"
