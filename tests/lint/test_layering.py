"""lint never imports render; the plain-text lint path imports no rich/jinja/pulumi."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import ROOT

LINT = ROOT / "src" / "archform" / "lint"


def test_lint_does_not_import_render() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted(LINT.rglob("*.py"))
        if "archform.render" in p.read_text("utf-8")
    ]
    assert offenders == []


def test_plain_lint_imports_nothing_heavy(tmp_path: Path) -> None:
    blueprint = ROOT / "blueprints" / "onprem-h100-ib-lustre.yaml"
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['archform', 'lint', {str(blueprint)!r}]\n"
        "try:\n    runpy.run_module('archform', run_name='__main__')\n"
        "except SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('jinja2', 'pulumi', 'ansible', 'kubernetes_validate', 'archform') "
        "and (m.split('.')[0] != 'archform' or m.startswith('archform.render')))\n"
        "rich = sorted(m for m in sys.modules if m.startswith('rich'))\n"
        "print('HEAVY', heavy)\n"
        "print('RICH', bool(rich))\n"
    )
    env = {"PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert "HEAVY []" in proc.stdout, proc.stdout + proc.stderr
