"""The composite GitHub Action (action.yml): valid metadata, documented, and its steps work.

1. action.yml validates against SchemaStore's published schema of action metadata
   (vendored: github-action.schema.json, source and licence in SCHEMA-SOURCE.md), and the
   validator is shown to reject broken metadata.
2. Every input is documented in README.md; the example workflow passes only real inputs.
3. The action's own bash steps run for real (bash, git, archform) with the inputs and the
   GitHub context a pull_request run gives them: SARIF for every finding, annotations and a
   failing job only for findings the branch introduced. The `uses:` steps (setup-python,
   upload-sarif) are GitHub's own actions and are not run here.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from ruamel.yaml import YAML

from support import BLUEPRINTS, ROOT, require_tool

HERE = Path(__file__).parent
ACTION = YAML(typ="safe").load((ROOT / "action.yml").read_text("utf-8"))
SCHEMA = json.loads((HERE / "github-action.schema.json").read_text("utf-8"))
BAD = ROOT / "tests" / "rules" / "fixtures" / "TRN001" / "fail_doc_example.yaml"


def _errors(action: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA)
    return [e.message for e in validator.iter_errors(action)]


def test_action_yml_validates_against_the_published_schema() -> None:
    assert _errors(ACTION) == []
    assert ACTION["runs"]["using"] == "composite"


@pytest.mark.parametrize(
    "breakage",
    ["run step without shell", "input without description", "unknown top-level key"],
)
def test_schema_rejects_broken_metadata(breakage: str) -> None:
    action = copy.deepcopy(ACTION)
    if breakage == "run step without shell":
        next(s for s in action["runs"]["steps"] if "run" in s).pop("shell")
    elif breakage == "input without description":
        action["inputs"]["paths"].pop("description")
    else:
        action["entrypoint"] = "lint.sh"
    assert _errors(action)


def test_steps_upload_sarif_and_annotate() -> None:
    steps = ACTION["runs"]["steps"]
    uses = [s["uses"] for s in steps if "uses" in s]
    assert "github/codeql-action/upload-sarif@v3" in uses
    runs = "\n".join(s["run"] for s in steps if "run" in s)
    assert "--format sarif" in runs and "--format github" in runs and "--diff-base" in runs
    lint_help = subprocess.run(
        [sys.executable, "-m", "archform", "lint", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    ).stdout
    for option in set(re.findall(r"(--[a-z][a-z-]+)", runs)) - {"--version"}:
        if option in ("--disable-pip-version-check", "--no-tags", "--verify", "--quiet"):
            continue
        assert option in lint_help, option
    for step in steps:
        if "run" in step:
            assert "${{" not in step["run"], "inputs reach scripts via env only"


def test_every_input_is_documented_and_the_example_uses_only_inputs() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("### GitHub Action") :]
    for name, spec in ACTION["inputs"].items():
        assert f"| `{name}` |" in section, f"README does not document input {name}"
        default = spec.get("default", "")
        assert (f"`{default}`" if default else "(empty)") in section.split(f"| `{name}` |")[1]
    workflow = YAML(typ="safe").load((ROOT / "examples/pr-review/archform-lint.yml").read_text())
    (step,) = [s for s in workflow["jobs"]["lint"]["steps"] if "archform@" in s.get("uses", "")]
    assert set(step.get("with", {})) <= set(ACTION["inputs"])


# --- running the action's bash steps -------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


def _expand(value: str, context: dict[str, str]) -> str:
    def sub(match: re.Match[str]) -> str:
        key = match.group(1).strip()
        assert key in context, f"unresolved expression {key}"
        return context[key]

    return re.sub(r"\$\{\{([^}]*)\}\}", sub, value)


def _run_step(name: str, context: dict[str, str], cwd: Path, env: dict[str, str]) -> Any:
    step = next(s for s in ACTION["runs"]["steps"] if s["name"] == name)
    assert step["shell"] == "bash"
    step_env = {k: _expand(str(v), context) for k, v in step.get("env", {}).items()}
    return subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=cwd,
        env={**env, **step_env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def pull_request(tmp_path: Path) -> tuple[Path, dict[str, str], dict[str, str]]:
    """A clone on branch `pr` whose base `main` has a clean blueprint; archform on PATH."""
    require_tool("git", "bash")
    upstream = tmp_path / "upstream"
    (upstream / "blueprints").mkdir(parents=True)
    _git(upstream, "init", "-q", "-b", "main")
    _git(upstream, "config", "user.email", "t@example.com")
    _git(upstream, "config", "user.name", "t")
    (upstream / "blueprints" / "aws.yaml").write_bytes(
        (BLUEPRINTS / "aws-p5-efa-fsx.yaml").read_bytes()
    )
    _git(upstream, "add", "-A")
    _git(upstream, "commit", "-q", "-m", "base")
    work = tmp_path / "work"
    _git(tmp_path, "clone", "-q", str(upstream), str(work))
    _git(work, "checkout", "-q", "-b", "pr")
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "archform").write_text(
        f'#!/bin/sh\nPYTHONPATH="{ROOT / "src"}" exec "{sys.executable}" -m archform "$@"\n'
    )
    (shim / "archform").chmod(0o755)
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    env = {
        **os.environ,
        "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}",
        "GITHUB_OUTPUT": str(tmp_path / "github-output"),
        "NO_COLOR": "1",
    }
    context = {f"inputs.{k}": str(v.get("default", "")) for k, v in ACTION["inputs"].items()}
    context.update(
        {
            "github.event_name": "pull_request",
            "github.base_ref": "main",
            "github.action_path": str(ROOT),
            "runner.temp": str(runner_temp),
        }
    )
    return work, context, env


def test_sarif_step_writes_every_finding(
    pull_request: tuple[Path, dict[str, str], dict[str, str]],
) -> None:
    work, context, env = pull_request
    (work / "blueprints" / "cluster.yaml").write_bytes(BAD.read_bytes())
    run = _run_step("Lint (every finding, SARIF)", context, work, env)
    assert run.returncode == 0, run.stderr
    sarif = json.loads((Path(context["runner.temp"]) / "archform.sarif").read_text("utf-8"))
    rules = {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert "TRN001" in rules
    output = Path(env["GITHUB_OUTPUT"]).read_text("utf-8")
    assert f"file={context['runner.temp']}/archform.sarif" in output


def test_annotate_step_fails_only_on_new_findings(
    pull_request: tuple[Path, dict[str, str], dict[str, str]],
) -> None:
    work, context, env = pull_request
    clean = _run_step("Annotate new findings", context, work, env)
    assert clean.returncode == 0, clean.stdout + clean.stderr

    (work / "blueprints" / "cluster.yaml").write_bytes(BAD.read_bytes())
    _git(work, "add", "-A")
    new = _run_step("Annotate new findings", context, work, env)
    assert new.returncode == 1, new.stdout + new.stderr
    assert "::error file=blueprints/cluster.yaml,line=6" in new.stdout
    assert "TRN001" in new.stdout
