"""Kubernetes manifests: kubernetes-validate in strict mode for the declared version.

Every YAML file under a `kubernetes/` folder of the tree that starts with the header
`# kubernetes-version: 1.30` is checked object by object. Core kinds use the schemas
kubernetes-validate ships (strict: unknown fields fail); the custom resources archform
generates use the vendored schemas in kubernetes_crds. A kind with no schema at all is a
failure, not a warning (kubernetes-validate only WARNs about those, which would let a
removed API such as policy/v1beta1 through). Without kubernetes-validate: skipped.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

from archform.install import extra_hint
from archform.verify import Check, Result

NAME = "kubernetes-validate"
HEADER = re.compile(r"^# kubernetes-version: (\d+\.\d+)\s*$")


def validate_object(obj: dict[str, Any], version: str) -> str | None:
    """The first problem with one object for Kubernetes `version` ("1.30"), or None."""
    import jsonschema
    import kubernetes_validate
    from kubernetes_validate import utils as kv

    from archform.verify.checks.kubernetes_crds import crd_schemas

    if not isinstance(obj, dict) or "apiVersion" not in obj or "kind" not in obj:
        return "not a Kubernetes object (apiVersion and kind are required)"
    key = (str(obj["apiVersion"]), str(obj["kind"]))
    where = f"{key[1]} {obj.get('metadata', {}).get('name', '?')}"
    crd = crd_schemas().get(key)
    if crd is not None:
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(crd).iter_errors(obj)
        )
        if error is None:
            return None
        path = ".".join(str(p) for p in error.absolute_path)
        return f"{where}: {path or '<root>'}: {error.message}"
    supported = kv.all_versions()
    if not any(kv.major_minor(v) == kv.major_minor(version + ".0") for v in supported):
        return (
            f"Kubernetes {version} is outside what kubernetes-validate "
            f"{kubernetes_validate.__version__} ships ({supported[0]}..{supported[-1]})"
        )
    try:
        kubernetes_validate.validate(obj, version + ".0", strict=True)
    except kv.SchemaNotFoundError:
        return f"{where}: no schema for {key[0]} {key[1]} in Kubernetes {version} (removed API?)"
    except kv.ValidationError as exc:
        path = ".".join(str(p) for p in exc.path)
        return f"{where}: {path or '<root>'}: {exc.message}"
    return None


def manifests(root: Path) -> list[tuple[Path, str]]:
    """(file, declared version) of every versioned manifest in the tree, sorted."""
    found: list[tuple[Path, str]] = []
    for path in sorted(root.rglob("*.yaml")):
        if "kubernetes" not in path.relative_to(root).parts[:-1]:
            continue
        first = path.read_text("utf-8").split("\n", 1)[0]
        match = HEADER.match(first)
        if match:
            found.append((path, match.group(1)))
    return found


def check_file(path: Path, version: str) -> list[str]:
    """Problems in one manifest file (empty when every object passes)."""
    from ruamel.yaml import YAML

    problems: list[str] = []
    loaded = YAML(typ="safe", pure=True).load_all(path.read_text("utf-8"))
    docs = [d for d in loaded if d is not None]
    if not docs:
        return ["no objects in file"]
    for obj in docs:
        problem = validate_object(obj, version)
        if problem:
            problems.append(problem)
    return problems


def _applies(root: Path) -> bool:
    return bool(manifests(root))


def _run(root: Path) -> list[Result]:
    found = manifests(root)
    if importlib.util.find_spec("kubernetes_validate") is None:
        return [
            Result(
                NAME,
                str(root),
                "skipped",
                f"kubernetes-validate is not installed (hint: {extra_hint('kubernetes')})",
            )
        ]
    results = []
    for path, version in found:
        rel = path.relative_to(root).as_posix()
        problems = check_file(path, version)
        if problems:
            results.append(Result(NAME, rel, "failed", "; ".join(problems)))
        else:
            results.append(Result(NAME, rel, "passed", f"strict, Kubernetes {version}"))
    return results


CHECK = Check(name=NAME, applies=_applies, run=_run)
