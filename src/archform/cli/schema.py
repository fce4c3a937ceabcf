"""`archform schema`: the JSON Schema of a blueprint document."""

from __future__ import annotations

import json

import typer


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("schema")(schema)


def schema() -> None:
    """Print the blueprint JSON Schema (for editors using yaml-language-server)."""
    from archform.spec.schema import blueprint_schema

    typer.echo(json.dumps(blueprint_schema(), indent=2, sort_keys=True))
