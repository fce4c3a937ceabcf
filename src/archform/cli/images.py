"""`archform images [--provider P] [--format table|json]`: the node image table.

`compute.image` takes an id from this table (archform/spec/data/images.yaml); the listing
shows, per image, where it exists, which fabric stacks and Lustre clients archform can put on
it, what it ships preinstalled, and the provider defaults in the order archform tries them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from archform.cli._core import fail, guarded
from archform.spec.provider import names

if TYPE_CHECKING:
    from archform.spec.images import Image, ImageTable

FORMATS = ("table", "json")


def _either() -> str:
    """`a, b or c`: every provider."""
    *first, last = names()
    return f"{', '.join(first)} or {last}" if first else last


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("images")(images)


def images(
    provider: Annotated[
        str | None, typer.Option("--provider", help=f"Only images of {_either()}.")
    ] = None,
    output_format: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
) -> None:
    """List the node images `compute.image` can name: providers, fabrics, Lustre, defaults."""
    typer.echo(guarded(lambda: render_images(provider, output_format)), nl=False)


def render_images(provider: str | None, output_format: str) -> str:
    """The image table as text or JSON (a usage error for an unknown provider or format)."""
    from archform.spec.images import load_images

    if output_format not in FORMATS:
        fail(f"unknown format {output_format!r}", f"choose one of {', '.join(FORMATS)}")
    table = load_images()
    if provider is not None and provider not in table.defaults:
        fail(f"unknown provider {provider!r}", f"choose one of {', '.join(table.defaults)}")
    chosen = [i for i in table.images.values() if provider is None or provider in i.providers]
    if output_format == "json":
        return json.dumps([_record(i, table) for i in chosen], indent=2) + "\n"
    return _text(chosen, table, provider)


def _usable(methods: dict[str, str]) -> list[str]:
    return [k for k, v in methods.items() if v != "unavailable"]


def _defaults(image: Image, table: ImageTable) -> dict[str, int]:
    """Provider -> 1-based rank among that provider's defaults (absent: not a default)."""
    return {
        p: ids.index(image.id) + 1
        for p, ids in table.defaults.items()
        if image.id in ids and p in image.providers
    }


def _record(image: Image, table: ImageTable) -> dict[str, Any]:
    return {
        "id": image.id,
        "title": image.title,
        "providers": image.providers,
        "default_rank": _defaults(image, table),
        "codename": image.codename,
        "ships": {k: v for k, v in image.ships.items() if v is not None},
        "fabrics": image.fabrics,
        "lustre": image.lustre,
        "selectable": image.archform_roles,
        "why_not": image.why_not or None,
        "source": image.source,
    }


def _text(chosen: list[Image], table: ImageTable, provider: str | None) -> str:
    lines: list[str] = []
    for image in chosen:
        ranks = _defaults(image, table)
        where = ", ".join(
            f"{p} (default #{ranks[p]})" if p in ranks else p
            for p in image.providers
            if provider is None or p == provider
        )
        lines.append(f"{image.id}: {image.title}")
        lines.append(f"  providers: {where}")
        fabrics = [k for k in _usable(image.fabrics) if k != "ethernet"]
        lines.append(f"  fabrics:   {', '.join(fabrics) or 'ethernet only'}")
        lustre = [p for p in _usable(image.lustre) if provider is None or p == provider]
        lines.append(f"  lustre:    {', '.join(lustre) or 'none'}")
        ships = [f"{k} {v}" for k, v in image.ships.items() if v is not None]
        lines.append(f"  ships:     {', '.join(ships) or 'nothing archform checks'}")
        if not image.archform_roles:
            lines.append(f"  not selectable: {image.why_not}")
        lines.append(f"  source:    {image.source}")
    order = "; ".join(
        f"{p}: {', '.join(ids)}"
        for p, ids in table.defaults.items()
        if provider is None or p == provider
    )
    lines.append("")
    lines.append(f"defaults, tried in order for the fabric and Lustre a blueprint needs: {order}")
    return "\n".join(lines) + "\n"
