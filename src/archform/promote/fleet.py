"""Point the fleet's Kubernetes Deployment manifests at a model version.

The weights URI in the pod template (the fetch command, args and env) is replaced by the
version's URI, and the template gets the version, URI and manifest checksum as env vars
and annotations. Any change to the pod template makes Kubernetes roll the Deployment
(the fleet's strategy is RollingUpdate, maxUnavailable 0). Comments and layout survive
(ruamel round trip); every file is checked before any is written, and each is replaced
atomically.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from archform.spec import UsageError

ENV_URI = "ARCHFORM_MODEL_URI"
ENV_VERSION = "ARCHFORM_MODEL_VERSION"
ANN_VERSION = "archform.io/model-version"
ANN_CHECKSUM = "archform.io/model-checksum"


@dataclass(frozen=True, slots=True)
class Rollout:
    """What to point the fleet at."""

    uri: str
    version: str
    checksum: str


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=2, offset=0)
    yaml.explicit_start = False
    return yaml


def manifest_files(dirs: tuple[Path, ...]) -> list[Path]:
    """YAML files of the fleet's manifest folders, sorted."""
    files: list[Path] = []
    for folder in dirs:
        if not folder.is_dir():
            raise UsageError(
                f"{folder}: fleet manifest folder not found",
                "generate the Platform together with its fleet (archform generate FILE -o DIR)",
            )
        files.extend(sorted(p for p in folder.iterdir() if p.suffix in {".yaml", ".yml"}))
    return files


def _containers(deployment: Any) -> list[Any]:
    spec = deployment["spec"]["template"]["spec"]
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


def _current_uri(deployment: Any, initial: str) -> str:
    for container in _containers(deployment):
        for env in container.get("env") or []:
            if env.get("name") == ENV_URI and isinstance(env.get("value"), str):
                return str(env["value"])
    return initial


def _replace(value: Any, old: str, new: str) -> tuple[Any, int]:
    if not isinstance(value, str) or old not in value:
        return value, 0
    replaced = value.replace(old, new)
    # keep ruamel's quoting style (its scalar strings are str subclasses)
    return (replaced if type(value) is str else type(value)(replaced)), 1


def _point(deployment: Any, initial: str, rollout: Rollout) -> int:
    """Rewrite one Deployment in place; the number of references replaced."""
    old = _current_uri(deployment, initial)
    hits = 0
    for container in _containers(deployment):
        for field in ("command", "args"):
            items = container.get(field)
            if items is None:
                continue
            for i, item in enumerate(items):
                items[i], n = _replace(item, old, rollout.uri)
                hits += n
        env = container.get("env")
        if env is None:
            container["env"] = env = []
        for item in env:
            if item.get("name") in {ENV_URI, ENV_VERSION}:
                continue
            item["value"], n = _replace(item.get("value"), old, rollout.uri)
            hits += n
        _set_env(env, ENV_URI, rollout.uri)
        _set_env(env, ENV_VERSION, rollout.version)
    meta = deployment["spec"]["template"].setdefault("metadata", {})
    annotations = meta.setdefault("annotations", {})
    annotations[ANN_VERSION] = rollout.version
    annotations[ANN_CHECKSUM] = rollout.checksum
    return hits


def _set_env(env: Any, name: str, value: str) -> None:
    for item in env:
        if item.get("name") == name:
            item["value"] = value
            return
    env.append({"name": name, "value": value})


def point_fleet(
    dirs: tuple[Path, ...],
    deployment: str,
    initial_source: str,
    rollout: Rollout,
    *,
    dry_run: bool = False,
) -> list[Path]:
    """Rewrite every manifest holding the named Deployment; the files changed.

    With `dry_run` every check runs but nothing is written.
    """
    yaml = _yaml()
    pending: list[tuple[Path, bytes]] = []
    found = 0
    for path in manifest_files(dirs):
        docs = list(yaml.load_all(path.read_text("utf-8")))
        touched = False
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") != "Deployment":
                continue
            if doc.get("metadata", {}).get("name") != deployment:
                continue
            found += 1
            if _point(doc, initial_source, rollout) == 0:
                raise UsageError(
                    f"{path}: Deployment {deployment} does not reference the weights URI "
                    f"{_current_uri(doc, initial_source)!r}",
                    "the fleet must load its weights from the registry (model.source)",
                )
            touched = True
        if touched:
            buffer = io.StringIO()
            yaml.dump_all(docs, buffer)
            pending.append((path, buffer.getvalue().encode("utf-8")))
    if not found:
        raise UsageError(
            f"no Deployment named {deployment!r} in " + ", ".join(str(d) for d in dirs),
            "generate the Platform together with its fleet, then promote",
        )
    changed = [path for path, data in pending if path.read_bytes() != data]
    if not dry_run:
        for path, data in pending:
            if path in changed:
                _atomic_write(path, data)
    return changed


def _atomic_write(path: Path, data: bytes) -> None:
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.chmod(path.stat().st_mode & 0o777)
        tmp.replace(path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
