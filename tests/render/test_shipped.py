"""Shipped code: real files under templates/, copied verbatim or spliced as fragments."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import support
from archform import providers
from archform.bundled import templates_dir
from archform.render.env import FRAGMENT_MARKER, fragment, shipped, source
from archform.render.generate import build_files
from archform.spec import load_paths


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
    own = [providers.templates(name) for name in providers.names()]
    roots = [templates_dir(), *(folder for folder in own if folder is not None)]
    assert len(roots) > 1, "the providers' own templates/ folders are checked too"
    plain = [
        p.as_posix()
        for root in roots
        for p in sorted(Path(root).rglob("*.j2"))
        if p.name.endswith((".py.j2", ".sh.j2"))
        and not any(tag in p.read_text("utf-8") for tag in ("{{", "{%", "{#"))
    ]
    assert plain == []


# -- shellcheck: the shipped shell scripts and every generated one -------------------------

SHELLS = (b"#!/bin/sh", b"#!/bin/bash", b"#!/usr/bin/env bash", b"#!/usr/bin/env sh")


def _check_shipped() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "check_shipped", support.ROOT / "scripts" / "check-shipped.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_shipped_fails_on_a_shellcheck_warning(tmp_path: Path, capsys: Any) -> None:
    support.require_tool("shellcheck")
    gate = _check_shipped()
    script = tmp_path / "hook.sh"
    script.write_text('#!/bin/sh\nfor f in $(ls /etc); do echo "$f"; done\n')  # SC2045
    shellcheck, _ = gate.find_shellcheck(os.environ)
    assert gate.check_shell([script], shellcheck) is False
    assert "SC2045" in capsys.readouterr().out
    script.write_text('#!/bin/sh\nfor f in /etc/*; do echo "$f"; done\n')
    assert gate.check_shell([script], shellcheck) is True


def test_a_missing_shellcheck_is_a_skip_locally_and_a_failure_in_ci(tmp_path: Path) -> None:
    gate = _check_shipped()
    assert gate.find_shellcheck({"PATH": str(tmp_path)}) == (None, False)
    assert gate.find_shellcheck({"PATH": str(tmp_path), "ARCHFORM_REQUIRE_TOOLS": "1"}) == (
        None,
        True,
    )
    fake = tmp_path / "shellcheck"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert gate.find_shellcheck({"PATH": str(tmp_path)}) == (str(fake), False)


def _generated_shell_scripts() -> dict[str, bytes]:
    """Every shell script archform generates for the bundled blueprints, by tree/path."""
    found: dict[str, bytes] = {}
    for path in support.bundled_blueprints():
        for f in build_files(load_paths([path])):
            if f.path.endswith(".sh") or f.content.startswith(SHELLS):
                found[f"{path.stem}/{f.path}"] = f.content
    return found


def test_every_generated_shell_script_passes_shellcheck(tmp_path: Path) -> None:
    """The scripts rendered from .sh.j2 templates too (check-shipped sees only real files)."""
    support.require_tool("shellcheck")
    scripts = _generated_shell_scripts()
    assert any(p.endswith("roles/nccl/files/task_prolog.sh") for p in scripts)
    assert any(p.endswith("roles/nccl/files/nccl.sh") for p in scripts)
    problems = []
    for rel, content in sorted(scripts.items()):
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        done = subprocess.run(
            ["shellcheck", "--severity=warning", str(target)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            problems.append(f"{rel}:\n{done.stdout}")
    assert problems == [], "\n".join(problems)


def test_a_providers_own_file_is_found_through_the_registry() -> None:
    """A provider's templates/ folder is named by the provider in the one environment."""
    from archform.render.env import exists, provider_template

    folder = providers.templates("aws")
    assert folder is not None and folder.parent.name == "aws"
    name = provider_template("aws", "pulumi/network.py")
    assert name == "aws/pulumi/network.py" and exists(name)
    assert shipped(name) == (folder / "pulumi/network.py").read_text("utf-8")
    assert not exists("aws/pulumi/no-such-module.py")
    assert providers.templates("onprem") is None  # renders nothing of its own
    with pytest.raises(LookupError, match="onprem has no templates"):
        provider_template("onprem", "pulumi/__main__.py")


def test_check_shipped_sees_every_providers_shipped_python() -> None:
    gate = _check_shipped()
    covered = {
        p for folders, _ in gate.programs().values() for f in folders for p in f.glob("*.py")
    }
    found = set(gate.shipped_python())
    assert found == covered
    for name in ("aws", "gcp", "azure"):
        folder = providers.templates(name)
        assert folder is not None
        assert (folder / "pulumi/__main__.py").resolve() in {p.resolve() for p in found}, name
    front_door = providers.templates("azure")
    assert front_door is not None
    assert (front_door / "fleet/archform_frontdoor.py").resolve() in {p.resolve() for p in found}


def test_a_shared_folder_named_after_a_provider_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared templates/aws/ would hide the AWS package's own files: the loader refuses it."""
    from archform.render import env

    (tmp_path / "aws").mkdir()
    monkeypatch.setattr(env, "templates_dir", lambda: tmp_path)
    with pytest.raises(ValueError, match="templates/aws would hide provider aws"):
        env.loader()
