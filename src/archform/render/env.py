"""The one Jinja environment every generator uses."""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import FileSystemLoader, StrictUndefined
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace

from archform.bundled import templates_dir
from archform.render.filters import FILTERS


@cache
def environment() -> ImmutableSandboxedEnvironment:
    """StrictUndefined, trailing newlines kept, only typed filters; no clock or randomness."""
    env = ImmutableSandboxedEnvironment(
        loader=FileSystemLoader(str(templates_dir())),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,
    )
    # Drop Jinja's own filters that could bypass quoting or vary by run.
    for name in ("random", "safe", "forceescape", "pprint", "xmlattr", "urlize", "tojson"):
        env.filters.pop(name, None)
    env.filters.update(FILTERS)
    env.globals.clear()
    env.globals.update({"range": range, "namespace": Namespace})
    return env


def render(template: str, context: dict[str, Any]) -> str:
    """Render one template with a plain view-model; output always ends with one newline."""
    text = environment().get_template(template).render(**context)
    lines = [line.rstrip() for line in text.splitlines()]
    return "\n".join(lines).rstrip("\n") + "\n"
