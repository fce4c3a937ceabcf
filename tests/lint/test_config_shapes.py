"""Issue 24: a config table of the wrong shape is one located line and exit 2, never exit 3.

The config is found by walking up from the blueprint, so a stray `.archform.toml` in a parent
folder used to break every lint with an internal error.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from archform.cli._app import build
from support import BLUEPRINTS

LOCATED = re.compile(r"^(?P<file>[^\n]+):(?P<line>\d+):\d+: error: [^\n]+\(hint: [^\n]+\)$")

CASES = {
    # name: (config file name, text, line of the offending key)
    "archform-toml-tool-string": (".archform.toml", 'select = ["NET"]\ntool = "x"\n', 2),
    "pyproject-archform-string": ("pyproject.toml", '[tool]\narchform = "x"\n', 1),
    "fail-on-list": (".archform.toml", "\nfail-on = [1]\n", 2),
    "fail-on-table": ("pyproject.toml", "[tool.archform]\nfail-on = {a = 1}\n", 2),
    "select-numbers": (".archform.toml", "select = [1, 2]\n", 1),
    "ignore-table": ("pyproject.toml", "[tool.archform]\n\nignore = {x = 1}\n", 3),
    "rules-list": (".archform.toml", "rules = [1]\n", 1),
    "unknown-key": (".archform.toml", "\n\nselekt = []\n", 3),
}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_stray_config_of_the_wrong_shape_is_located(case: str, tmp_path: Path) -> None:
    name, text, line = CASES[case]
    (tmp_path / name).write_text(text)
    nested = tmp_path / "team" / "clusters"
    nested.mkdir(parents=True)
    bp = nested / "cluster.yaml"
    shutil.copy(BLUEPRINTS / "onprem-cpu-smoke.yaml", bp)
    result = CliRunner().invoke(build(["lint"]), ["lint", str(bp)])
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.output.splitlines()
    assert len(lines) == 1, lines
    hit = LOCATED.match(lines[0])
    assert hit, lines[0]
    assert hit["file"] == str(tmp_path / name) and int(hit["line"]) == line, lines[0]
