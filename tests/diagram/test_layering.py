"""diagram imports only spec; diff never imports render (they sit beside lint/render)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from support import ROOT

PKG = ROOT / "src" / "archform"


def _archform_imports(folder: Path) -> set[str]:
    found = set()
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            found |= {".".join(n.split(".")[:2]) for n in names if n.startswith("archform.")}
    return found


@pytest.mark.parametrize(
    ("package", "allowed"),
    [
        ("diagram", {"archform.diagram", "archform.spec"}),
        ("diff", {"archform.diff", "archform.spec", "archform.estimate"}),
    ],
)
def test_package_imports_only_lower_layers(package: str, allowed: set[str]) -> None:
    imports = _archform_imports(PKG / package)
    assert imports, "the scan must see the package's own imports"
    assert imports <= allowed, imports - allowed
