"""`archform verify DIR` gives the same verdict for a relative and an absolute DIR.

ansible-lint's ``--project-dir`` is resolved from ansible-lint's own working folder, so a
relative DIR as the README shows it (`archform verify out/`) used to fail the lint check with
"Failed to determine a valid project_dir" while the absolute path passed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import support
from archform.verify.checks import ansible as ansible_check

SMOKE = support.BLUEPRINTS / "onprem-cpu-smoke.yaml"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    support.require_tool("ansible-playbook", "ansible-lint", "ansible-inventory", "slurmctld")
    if ansible_check.collections_path() is None:
        if support.REQUIRE_TOOLS:
            pytest.fail("collections missing: run scripts/vendor-collections.sh")
        pytest.skip("collections missing: run scripts/vendor-collections.sh")
    parent = tmp_path_factory.mktemp("verify-rel")
    proc = support.run_cli(["generate", str(SMOKE), "-o", "out"], cwd=parent)
    assert proc.returncode == 0, proc.stderr
    return parent


def _verdicts(parent: Path, directory: str) -> dict[str, str]:
    proc = support.run_cli(["verify", directory, "--format", "json"], cwd=parent, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {r["artifact"]: r["status"] for r in json.loads(proc.stdout)}


@pytest.mark.parametrize("form", ["out/", "absolute"])
def test_verify_passes_for_relative_and_absolute_dir(generated: Path, form: str) -> None:
    directory = str(generated / "out") if form == "absolute" else form
    verdicts = _verdicts(generated, directory)
    lint = [a for a in verdicts if "ansible-lint" in a]
    assert lint, f"no ansible-lint result in {verdicts}"
    assert set(verdicts.values()) == {"passed"}, verdicts
