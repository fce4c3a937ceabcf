"""The PR-review workflow and pre-commit hooks are well-formed and call real options."""

from __future__ import annotations

from ruamel.yaml import YAML

from support import ROOT, run_cli


def test_pre_commit_hooks() -> None:
    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    ids = {h["id"]: h for h in hooks}
    assert set(ids) == {"archform-lint", "archform-validate"}
    for hook in hooks:
        assert {"id", "name", "entry", "language", "types"} <= set(hook)
        assert hook["types"] == ["yaml"]
        # every staged YAML file is passed: non-blueprints must be skipped, not errors
        assert hook["entry"].startswith("archform ") and "--force-exclude" in hook["entry"]
        assert run_cli([*hook["entry"].split()[1:], "--help"]).returncode == 0


def test_workflow_uses_the_action() -> None:
    """The example workflow calls the composite action (tests/action/ checks the action)."""
    workflow = YAML(typ="safe").load((ROOT / "examples/pr-review/archform-lint.yml").read_text())
    steps = workflow["jobs"]["lint"]["steps"]
    (step,) = [s for s in steps if s.get("uses", "").split("@")[0].endswith("/archform")]
    assert step["uses"].endswith("@v1")
    assert workflow["permissions"]["security-events"] == "write"
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
