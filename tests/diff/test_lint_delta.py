"""`archform diff` lists the lint findings a change adds and fixes (matched by fingerprint)."""

from __future__ import annotations

import json
from pathlib import Path

from support import BLUEPRINTS, run_cli


def test_diff_reports_new_and_fixed_lint_findings(tmp_path: Path) -> None:
    old = tmp_path / "old.yaml"
    new = tmp_path / "new.yaml"
    text = (BLUEPRINTS / "aws-p5-efa-fsx.yaml").read_text()
    # before: SSH open to the world (SEC001); after: fixed, but spot training added (TRN003)
    old.write_text(text.replace("ssh_cidrs: [10.0.0.0/8]", 'ssh_cidrs: ["0.0.0.0/0"]'))
    new.write_text(text.replace("purchase: capacity_block ", "purchase: spot "))
    result = run_cli(["diff", str(old), str(new), "--format", "json"])
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert [f["rule"] for f in data["lint"]["new"]] == ["TRN003"]
    assert [f["rule"] for f in data["lint"]["fixed"]] == ["SEC001"]
    text_out = run_cli(["diff", str(old), str(new)]).stdout
    assert "New lint findings (1)" in text_out and "TRN003" in text_out
    md = run_cli(["diff", str(old), str(new), "--format", "md"]).stdout
    assert "**Fixed lint findings (1)**" in md and "| SEC001 |" in md
    quiet = run_cli(["diff", str(old), str(new), "--format", "json", "--no-lint"])
    assert "lint" not in json.loads(quiet.stdout)
