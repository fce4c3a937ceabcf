"""Shipped code: real files under templates/, copied verbatim or spliced as fragments."""

from __future__ import annotations

from pathlib import Path

import pytest

from archform.bundled import templates_dir
from archform.render.env import FRAGMENT_MARKER, fragment, shipped, source


def test_shipped_file_is_copied_byte_for_byte() -> None:
    path = templates_dir() / "pulumi/common/inventory.py"
    assert shipped("pulumi/common/inventory.py") == path.read_text("utf-8")
    assert source("pulumi/common/inventory.py", {}) == path.read_text("utf-8")


def test_shipped_refuses_a_template() -> None:
    with pytest.raises(ValueError, match="is a template"):
        shipped("pulumi/common/settings.py.j2")


def test_fragment_is_the_tail_after_its_marker() -> None:
    text = (templates_dir() / "pulumi/fleet/_api_key.py").read_text("utf-8")
    tail = fragment("pulumi/fleet/_api_key.py")
    assert FRAGMENT_MARKER not in tail
    assert text.endswith(tail + "\n")
    assert "class ApiKey(" in tail and "from fleet_objects import" not in tail


def test_no_template_is_plain_code_in_disguise() -> None:
    """A .py.j2/.sh.j2 without any Jinja syntax belongs in a real .py/.sh file."""
    plain = [
        p.relative_to(templates_dir()).as_posix()
        for p in sorted(Path(templates_dir()).rglob("*.j2"))
        if p.name.endswith((".py.j2", ".sh.j2"))
        and not any(tag in p.read_text("utf-8") for tag in ("{{", "{%", "{#"))
    ]
    assert plain == []
