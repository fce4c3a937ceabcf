"""Issue 13, item 1: rule options from .archform.toml are strict and bounded.

`mfu = 0.0`, `bus_efficiency = 0.0` or `knee_tokens_per_gpu = 0.0` crashed lint with a
ZeroDivisionError (exit 3); `min_gbps = true` silently meant 1; TOML's `nan` passed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support import BLUEPRINTS, run_cli


@pytest.mark.parametrize(
    ("table", "line", "expected"),
    [
        (
            "NET008",
            "exposed_fraction_threshold = 0.0",
            "rules.NET008.exposed_fraction_threshold: Input should be greater than 0",
        ),
        ("NET008", "mfu = 0.4", "rules.NET008.mfu: Extra inputs are not permitted"),
        ("INF009", "knee_tokens_per_gpu = 0.0", "rules.INF009.knee_tokens_per_gpu: Input should"),
        ("INF009", "single_tokens_per_gpu = -1.0", "rules.INF009.single_tokens_per_gpu: Input"),
        ("NET001", "min_gbps = true", "rules.NET001.min_gbps: Input should be a valid integer"),
        ("NET002", "min_gbps_per_gpu = nan", "rules.NET002.min_gbps_per_gpu: Input should be a"),
        ("FAC001", "max_air_kw = inf", "rules.FAC001.max_air_kw: Input should be a finite"),
    ],
)
def test_bad_rule_options_exit_2(tmp_path: Path, table: str, line: str, expected: str) -> None:
    for name in ("onprem-h100-ib-lustre.yaml", "platform-two-tier.yaml"):
        shutil.copy(BLUEPRINTS / name, tmp_path / name)
    (tmp_path / ".archform.toml").write_text(f"[rules.{table}]\n{line}\n")
    result = run_cli(["lint", str(tmp_path)], cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    (message,) = [m for m in result.stderr.splitlines() if not m.startswith("fatal:")]
    assert expected in message, message
