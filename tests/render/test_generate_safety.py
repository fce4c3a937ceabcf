"""Every generated tree: hostile strings stay inert, and output is byte-for-byte deterministic."""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from archform.render.generate import build_files
from archform.spec import SpecError, load_paths, load_text
from support import ROOT, bundled_blueprints

HOSTILE = [
    "x'); import os; os.system('id'); ('",
    'a"\nb: {{ lookup("pipe","id") }} &anc *anc $(id) `id` # c',
]


def string_leaves(data: Any, loc: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from string_leaves(value, (*loc, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from string_leaves(value, (*loc, i))
    elif isinstance(data, str) and loc and loc[-1] not in ("version", "kind"):
        yield loc


def replaced(data: Any, loc: tuple[Any, ...], value: str) -> Any:
    copy = json.loads(json.dumps(data, default=str))
    node = copy
    for part in loc[:-1]:
        node = node[part]
    node[loc[-1]] = value
    return copy


def shape_of_python(source: str) -> str:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            node.value = "<c>"
    return ast.dump(tree)


def shape_of_yaml(text: str) -> Any:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): strip(v) for k, v in value.items()}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return type(value).__name__

    yaml = YAML(typ="safe")
    return [strip(doc) for doc in yaml.load_all(text)]


def shapes(files: dict[str, bytes]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for path, data in files.items():
        text = data.decode("utf-8")
        if path.endswith(".py"):
            out[path] = shape_of_python(text)
        elif (
            path.endswith((".yaml", ".yml"))
            and "!unsafe" not in text
            and path != "resolved-blueprint.yaml"
        ):
            out[path] = shape_of_yaml(text)
    return out


@functools.cache
def baseline_shapes(name: str) -> tuple[frozenset[str], str]:
    files = {f.path: f.content for f in build_files(load_paths([ROOT / "blueprints" / name]))}
    return frozenset(files), json.dumps(shapes(files), sort_keys=True)


def raw_documents(path: Path) -> list[Any]:
    return list(YAML(typ="safe").load_all(path.read_text()))


CASES = [
    (path.name, index, loc)
    for path in bundled_blueprints()
    for index, doc in enumerate(raw_documents(path))
    for loc in string_leaves(doc)
]


@pytest.mark.parametrize(
    ("name", "index", "loc"),
    CASES,
    ids=[f"{n}-{i}-{'.'.join(map(str, loc))}" for n, i, loc in CASES],
)
def test_hostile_string_is_rejected_or_inert(name: str, index: int, loc: tuple[Any, ...]) -> None:
    path = ROOT / "blueprints" / name
    docs = raw_documents(path)
    base_paths, base_shapes = baseline_shapes(name)
    for payload in HOSTILE:
        variant = list(docs)
        variant[index] = replaced(docs[index], loc, payload)
        text = "\n---\n".join(json.dumps(d, default=str) for d in variant)
        try:
            loaded = load_text(text, "hostile.yaml")
        except SpecError:
            continue  # validation refused it: fine
        files = {f.path: f.content for f in build_files(loaded)}
        assert set(files) == base_paths
        # No structure was injected: every Python and YAML file has the same shape.
        assert json.dumps(shapes(files), sort_keys=True) == base_shapes
        resolved = list(YAML(typ="safe").load_all(files["resolved-blueprint.yaml"].decode()))
        node: Any = resolved[index]
        for part in loc:
            node = node[part]
        assert node == payload, "the value must come back exactly"


def tree(paths: list[Path]) -> dict[str, bytes]:
    return {f.path: f.content for f in build_files(load_paths(paths))}


@pytest.mark.parametrize("path", bundled_blueprints(), ids=lambda p: p.stem)
def test_render_twice_gives_identical_bytes(path: Path) -> None:
    assert tree([path]) == tree([path])


def test_render_is_independent_of_hash_seed() -> None:
    code = (
        "import hashlib, sys\n"
        "from archform.render.generate import build_files\n"
        "from archform.spec import load_paths\n"
        "for p in sys.argv[1:]:\n"
        "    for f in build_files(load_paths([p])):\n"
        "        print(p, f.path, hashlib.sha256(f.content).hexdigest())\n"
    )
    outputs = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT / "src"))
        result = subprocess.run(
            [sys.executable, "-c", code, *map(str, bundled_blueprints())],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert outputs[0].count("\n") >= len(bundled_blueprints())
