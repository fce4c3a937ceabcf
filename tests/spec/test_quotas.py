"""Issue 24: provider quotas as data, checked at the blueprint line.

200 or 60,000 `ssh_cidrs` used to validate, though archform writes one ingress rule per
entry into one AWS security group, which allows 60 per address family by default.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from archform.cli._app import build
from archform.spec.quotas import quotas
from support import BLUEPRINTS

AWS = BLUEPRINTS / "aws-p5-efa-fsx.yaml"
ONE = "ssh_cidrs: [10.0.0.0/8]"


def _with_cidrs(tmp_path: Path, cidrs: list[str]) -> Path:
    text = AWS.read_text()
    assert ONE in text
    out = tmp_path / "bp.yaml"
    listed = "".join(f"      - {c}\n" for c in cidrs)
    out.write_text(text.replace(ONE, "ssh_cidrs:\n" + listed))
    return out


def _validate(path: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(build(["validate"]), ["validate", str(path)])
    return result.exit_code, result.output.splitlines()


def test_every_quota_has_a_default_a_way_to_raise_it_and_a_source() -> None:
    assert quotas()
    for quota in quotas().values():
        assert quota.default > 0 and quota.raise_how and quota.source.startswith("https://")


def test_aws_ssh_ranges_over_the_rule_quota_are_refused_at_the_first_over(tmp_path: Path) -> None:
    limit = quotas()[("aws", "security_group_inbound_rules")].default
    cidrs = [f"10.{i // 256}.{i % 256}.0/24" for i in range(limit + 1)]
    bp = _with_cidrs(tmp_path, cidrs)
    code, lines = _validate(bp)
    assert code == 2 and len(lines) == 1, lines
    line = next(i for i, ln in enumerate(bp.read_text().splitlines(), 1) if cidrs[limit] in ln)
    where = rf"^{re.escape(str(bp))}:{line}:\d+: error: access\.ssh_cidrs\[{limit}\]: "
    assert re.match(where, lines[0]), lines[0]
    assert f"allows {limit} inbound rules" in lines[0] and "L-0EA8095F" in lines[0]


@pytest.mark.parametrize("count", [1, 60])
def test_up_to_the_quota_per_family_validates(tmp_path: Path, count: int) -> None:
    cidrs = [f"10.0.{i}.0/24" for i in range(count)] + [f"2001:db8:{i:x}::/48" for i in range(60)]
    code, lines = _validate(_with_cidrs(tmp_path, cidrs))
    assert code == 0, lines


def test_sixty_thousand_ranges_are_one_line_fast(tmp_path: Path) -> None:
    cidrs = [f"10.{i // 256 % 256}.{i % 256}.0/28" for i in range(60_000)]
    code, lines = _validate(_with_cidrs(tmp_path, cidrs))
    assert code == 2 and len(lines) == 1 and "access.ssh_cidrs[60]" in lines[0], lines[:3]
