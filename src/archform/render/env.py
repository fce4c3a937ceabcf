"""The one Jinja environment every generator uses."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
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


def render(template: str, context: Mapping[str, Any] | object) -> str:
    """Render one template with a view-model; output always ends with one newline.

    `context` is a mapping or a (frozen) dataclass instance, whose fields become the
    template's top-level names (nested views stay objects; templates read attributes).
    """
    if is_dataclass(context) and not isinstance(context, type):
        names = {f.name: getattr(context, f.name) for f in fields(context)}
    elif isinstance(context, Mapping):
        names = dict(context)
    else:
        raise TypeError(f"{template}: context must be a mapping or a dataclass instance")
    text = environment().get_template(template).render(**names)
    lines = [line.rstrip() for line in text.splitlines()]
    return "\n".join(lines).rstrip("\n") + "\n"
