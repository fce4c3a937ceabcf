"""`archform plan BLUEPRINT`: what the generated Pulumi programs would create, without a cloud.

Generates into a temporary folder, runs every Pulumi project found there in-process under
`pulumi.runtime.set_mocks` (no Pulumi CLI, no credentials), and lists the resources by type
and count with their key arguments.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import typer

from archform.cli._core import fail, guarded, select_documents
from archform.install import extra_hint
from archform.spec.provider import sdk_extras


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("plan")(plan)


def plan(
    blueprints: list[Path] = typer.Argument(..., help="Blueprint file(s)."),
    name: str | None = typer.Option(None, "--name", "-n", help="Only this document."),
    fmt: str = typer.Option("text", "--format", help="text or json"),
    config: list[str] = typer.Option(
        [], "--config", "-c", help="KEY=VALUE for the program's Pulumi config (repeatable)."
    ),
) -> None:
    """Dry-run the generated Pulumi programs under mocks: resources by type, key arguments."""

    def run() -> None:
        if fmt not in ("text", "json"):
            fail(f"unknown format {fmt!r}", "use text or json")
        overrides = {}
        for item in config:
            key, sep, value = item.partition("=")
            if not sep or not key:
                fail(f"--config {item!r} is not KEY=VALUE", "e.g. --config keyName=ops")
            overrides[key] = value
        projects = _plan(blueprints, name, overrides)
        if fmt == "json":
            typer.echo(json.dumps({"projects": projects}, indent=2, sort_keys=True))
        else:
            typer.echo(_text(projects), nl=False)

    guarded(run)


def _plan(
    blueprints: list[Path], name: str | None, overrides: dict[str, str]
) -> list[dict[str, Any]]:
    import importlib.util

    from archform.render.generate import build_files
    from archform.render.writer import write_tree
    from archform.spec import load_paths

    if importlib.util.find_spec("pulumi") is None:
        first, *others = sdk_extras()
        fail(
            "`archform plan` needs the Pulumi SDK",
            f"{extra_hint(first)} (or {', '.join(others)}, kubernetes: the blueprint's cloud)",
        )
    from archform.verify.pulumi_mock import MockProgramError, run_program
    from archform.verify.pulumi_projects import (
        dry_run_config,
        find_projects,
        install_hint,
        missing_sdks,
        summary,
    )

    loaded = load_paths(blueprints)
    docs = select_documents(loaded, name)
    with tempfile.TemporaryDirectory(prefix="archform-plan-") as tmp:
        root = Path(tmp) / "out"
        write_tree(root, build_files(loaded, docs))
        projects = find_projects(root)
        if not projects:
            fail("the blueprint generates no Pulumi project", "plan needs a cloud provider")
        results = []
        for project in projects:
            rel = project.relative_to(root).as_posix()
            missing = missing_sdks(project)
            if missing:
                fail(f"{rel}: needs {', '.join(missing)}", install_hint(missing))
            config, mocked = dry_run_config(project)
            config.update(overrides)
            mocked = [key for key in mocked if key not in overrides]
            try:
                run = run_program(project, config)
            except MockProgramError as exc:
                fail(f"{rel}: the program failed under mocks: {exc}", "this is a bug in archform")
            results.append(summary(rel, run, mocked))
    return results


def _text(projects: list[dict[str, Any]]) -> str:
    lines: list[str] = []
    for proj in projects:
        total = sum(proj["resources"].values())
        lines.append(f"{proj['path']}: {total} resources")
        for rtype, count in proj["resources"].items():
            lines.append(f"  {count:5d}  {rtype}")
        access = proj.get("deployer_access")
        if access:
            lines.append("  deployer access:")
            for key, value in access.items():
                shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
                lines.append(f"    {key}: {shown}")
        seen: set[str] = set()
        for detail in proj["details"]:
            key = json.dumps([detail["type"], detail["args"]], sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            same = sum(
                1
                for d in proj["details"]
                if json.dumps([d["type"], d["args"]], sort_keys=True) == key
            )
            args = ", ".join(
                f"{k}={json.dumps(v, sort_keys=True)}" for k, v in detail["args"].items()
            )
            suffix = f" (x{same})" if same > 1 else ""
            lines.append(f"  - {detail['name']}{suffix}: {args}")
        if proj["mock_config"]:
            lines.append(f"  mock config values for: {', '.join(proj['mock_config'])}")
        lines.append("")
    return "\n".join(lines)
