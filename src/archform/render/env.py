"""The one Jinja environment every generator uses, and the shipped files copied beside it.

A template (``x.j2``) is rendered; every other file is shipped code (a real ``.py`` or
``.sh`` that ruff, mypy and shellcheck check: scripts/check-shipped.py) and is copied byte
for byte. Values that vary reach shipped code through a generated settings module (a Pulumi
project's settings.py, a fleet's fleet_objects.py), never by templating.

Two kinds of folder feed the environment: the shared templates/ (names as they are there,
``ansible/site.yml.j2``) and each provider package's own templates/ folder, found through
the provider registry and named ``<provider>/<path>`` (`provider_template`). Shared
templates reach a provider's parts only through names the render code passes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from functools import cache
from typing import Any

from jinja2 import BaseLoader, ChoiceLoader, FileSystemLoader, PrefixLoader, StrictUndefined
from jinja2.exceptions import TemplateNotFound
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace

from archform import providers
from archform.bundled import templates_dir
from archform.render.filters import FILTERS


def loader() -> BaseLoader:
    """The shared templates/, then every provider's own folder under its name (registry)."""
    shared = templates_dir()
    own = {}
    for name in providers.names():
        folder = providers.templates(name)
        if folder is not None:
            if (shared / name).exists():
                raise ValueError(f"templates/{name} would hide provider {name}'s own templates")
            own[name] = FileSystemLoader(str(folder))
    return ChoiceLoader([FileSystemLoader(str(shared)), PrefixLoader(own)])


def provider_template(provider: str, name: str) -> str:
    """The environment's name of `provider`'s own file `name` (its package's templates/)."""
    if providers.templates(provider) is None:
        raise LookupError(f"provider {provider} has no templates/ folder for {name}")
    return f"{provider}/{name}"


@cache
def environment() -> ImmutableSandboxedEnvironment:
    """StrictUndefined, trailing newlines kept, only typed filters; no clock or randomness."""
    env = ImmutableSandboxedEnvironment(
        loader=loader(),
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
    """The text of a shipped (non-template) file, exactly as stored."""
    if name.endswith(".j2"):
        raise ValueError(f"{name} is a template: render it")
    env = environment()
    assert env.loader is not None
    return env.loader.get_source(env, name)[0]


def exists(name: str) -> bool:
    """Whether the environment has a file (template or shipped) of that name."""
    env = environment()
    assert env.loader is not None
    try:
        env.loader.get_source(env, name)
    except TemplateNotFound:
        return False
    return True


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
