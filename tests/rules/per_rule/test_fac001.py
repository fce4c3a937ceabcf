"""FAC001 (racks above 40 kW cooled by air): the option that moves the threshold, and its range.

An HGX/DGX H100 system draws up to 10.2 kW (NVIDIA DGX H100 User Guide,
https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html), so four of them
make the 40 kW rack the rule's default stops at; the fixtures pin 40 (not flagged) and 41
(flagged). `max_air_kw` moves the threshold.
"""

from __future__ import annotations

import pydantic
import pytest
from rulecase import FIXTURES

from archform.lint.engine import lint
from archform.lint.finding import Finding
from archform.lint.rule import load_rules
from archform.spec import load_paths

TWENTY = FIXTURES / "FAC001" / "pass_20_kw_air.yaml"


def _findings(max_air_kw: float) -> list[Finding]:
    rule = load_rules().get("FAC001")
    assert rule is not None
    options = {"FAC001": rule.options(max_air_kw=max_air_kw)}
    return list(lint(load_paths([TWENTY]), rules=[rule], options=options).findings)


def test_option_moves_the_threshold() -> None:
    # two 10.2 kW H100 systems would fill 20.4 kW: a site whose air handling stops at 19.5 kW
    (hit,) = _findings(19.5)
    assert (hit.line, hit.rule) == (9, "FAC001")
    assert hit.message.startswith(
        "20 kW per rack with air cooling; threshold: 19.5 kW for air (air-cooled racks"
    )
    assert _findings(20) == []


def _accepted(value: float) -> bool:
    rule = load_rules().get("FAC001")
    assert rule is not None
    try:
        rule.options(max_air_kw=value)
    except pydantic.ValidationError:
        return False
    return True


@pytest.mark.parametrize(
    ("value", "accepted"),
    [
        (-1.0, False),
        (0.0, False),
        (0.5, True),
        (1.0, True),
        (499.5, True),
        (500.0, True),
        (500.5, False),
        (501.0, False),
    ],
)
def test_max_air_kw_option_range(value: float, accepted: bool) -> None:
    # the threshold is compared with compute.rack.kw_per_rack, whose own range is above 0 and
    # at most 500 kW (Rack in the blueprint schema): the option takes the same range, so 0
    # (flag every air rack) and values past any rack are refused at the config line
    assert _accepted(value) is accepted
