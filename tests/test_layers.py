"""The import-linter contract in pyproject.toml holds: data flows one way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import ROOT, require_tool


def test_import_linter_contract_is_kept() -> None:
    require_tool("lint-imports")
    exe = Path(sys.executable).parent / "lint-imports"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    result = subprocess.run(
        [str(exe) if exe.exists() else "lint-imports"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")
    contracts = pyproject.count("[[tool.importlinter.contracts]]")
    # layers, cloud folders independent, shared helpers cloud-free, verify through
    # render.public, no cycle among render's modules
    assert contracts >= 5
    assert "archform.render.public" in pyproject and "acyclic_siblings" in pyproject
    assert f"{contracts} kept, 0 broken" in result.stdout
