"""The PR-review workflow and pre-commit hooks are well-formed and call real options."""

from __future__ import annotations

from ruamel.yaml import YAML

from support import ROOT, run_cli


def test_pre_commit_hooks() -> None:
    hooks = YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())
    ids = {h["id"]: h for h in hooks}
    assert set(ids) == {"archform-lint", "archform-validate"}
    for hook in hooks:
        assert {"id", "name", "entry", "language", "files"} <= set(hook)
        assert hook["entry"].startswith("archform ")
    assert run_cli([*ids["archform-lint"]["entry"].split()[1:], "--help"]).returncode == 0


def test_workflow_uses_existing_options() -> None:
    workflow = YAML(typ="safe").load((ROOT / "examples/pr-review/archform-lint.yml").read_text())
    steps = workflow["jobs"]["lint"]["steps"]
    runs = [s["run"] for s in steps if "run" in s and "archform lint" in s["run"]]
    assert len(runs) == 3
    help_text = run_cli(["lint", "--help"]).stdout
    for run in runs:
        for token in run.split():
            if token.startswith("--"):
                assert token in help_text, token
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == "archform.sarif"
    assert workflow["permissions"]["security-events"] == "write"
