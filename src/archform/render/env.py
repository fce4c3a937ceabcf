"""The one Jinja environment every generator uses, and the shipped files copied beside it.

A template (``x.j2``) is rendered; every other file under templates/ is shipped code (a real
``.py`` or ``.sh`` that ruff, mypy and shellcheck check: scripts/check-shipped.py) and is
copied byte for byte. Values that vary reach shipped code through a generated settings
module (a Pulumi project's settings.py, a fleet's fleet_objects.py), never by templating.
"""

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
    env.globals.update({"range": range, "namespace": Namespace, "fragment": fragment})
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


def shipped(name: str) -> str:
    """The text of a shipped (non-template) file under templates/, exactly as stored."""
    if name.endswith(".j2"):
        raise ValueError(f"{name} is a template: render it")
    return (templates_dir() / name).read_text("utf-8")


FRAGMENT_MARKER = "# --- archform fragment: "


def fragment(name: str) -> str:
    """The part of a shipped file after its fragment marker line, for a template to embed.

    Code that must sit inside a generated module (a Pulumi dynamic provider, serialized by
    value only when defined in ``__main__``) is a real file whose head (imports, names the
    host module defines) lets the gates check it alone; templates embed only its tail,
    without the final newline, as ``{{ fragment("...") }}`` on a line of its own.
    """
    head, marker, tail = shipped(name).partition(FRAGMENT_MARKER)
    if not marker:
        raise ValueError(f"{name} has no '{FRAGMENT_MARKER}' line")
    del head
    return tail.partition("\n")[2].rstrip("\n")


def source(name: str, context: Mapping[str, Any] | object) -> str:
    """`name` rendered when it is a template (``.j2``), else copied verbatim (`shipped`)."""
    return render(name, context) if name.endswith(".j2") else shipped(name)
