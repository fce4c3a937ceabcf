"""Layering of the new packages, checked on their source: promote imports only spec;
deploy never imports lint, promote or cli; the CLI stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import support

SRC = support.ROOT / "src" / "archform"


def _archform_imports(package: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[path.relative_to(SRC).as_posix()] = {
            n for n in names if n == "archform" or n.startswith("archform.")
        }
    return found


def test_promote_imports_only_spec_and_itself() -> None:
    imports = _archform_imports(SRC / "promote")
    assert imports, "no promote sources found"
    for path, names in imports.items():
        bad = {n for n in names if not n.startswith(("archform.spec", "archform.promote"))}
        assert not bad, f"{path} imports {sorted(bad)}"


# Leaf helpers that import nothing of archform themselves.
LEAVES = ("archform.galaxy_free", "archform.bundled", "archform.install")


def test_leaf_helpers_import_nothing_of_archform() -> None:
    for leaf in LEAVES:
        path = SRC / (leaf.split(".", 1)[1] + ".py")
        names = _archform_imports(path.parent)[path.relative_to(SRC).as_posix()]
        assert not names, f"{leaf} imports {sorted(names)}"


def test_deploy_imports_only_render_and_spec() -> None:
    allowed = ("archform.deploy", "archform.render", "archform.spec", *LEAVES)
    for path, names in _archform_imports(SRC / "deploy").items():
        bad = {n for n in names if not n.startswith(allowed)}
        assert not bad, f"{path} imports {sorted(bad)}"


def test_cli_import_does_not_load_heavy_libraries() -> None:
    code = (
        "import sys, archform.cli; print(sorted({m.split('.')[0] for m in sys.modules "
        "if m.split('.')[0] in {'pulumi', 'ansible', 'ansible_runner', 'boto3', "
        "'botocore'}}))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(support.ROOT / "src")},
        check=True,
    )
    assert proc.stdout.strip() == "[]"
