"""A team's own Ansible tasks and Pulumi code, kept in folders the blueprint names.

`extensions.ansible` is a folder with one sub-folder per hook, each holding task files
(`<hook>/<name>.yml`) that the generated site.yml includes, in name order, at that hook:

- `base`: every host, after the base settings and MUNGE;
- `compute`: compute nodes, after the GPU, fabric, container and health stack;
- `site`: every host, after Slurm is configured on all of them.

`extensions.pulumi` is a Python package folder (`__init__.py` plus further `.py` modules)
that the generated Pulumi program imports last and calls as
`extensions.extend(net=..., fs=..., nodes=...)` with what it built.

Both folders are relative to the blueprint file and are the team's: archform reads them and
copies them into the generated tree (`ansible/extensions/`, `pulumi/extensions/`) on every
run, so regeneration never overwrites the team's code, and a copy edited in the output is
protected by the manifest like every generated file. Only regular files with plain names are
taken (no symlinks, no other kinds of file); anything else is an error at the folder's line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HOOKS = ("base", "compute", "site")
MAX_FILES = 200
MAX_BYTES = 1 << 20
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,100}$")


@dataclass(frozen=True, slots=True)
class ExtensionFile:
    """One file of a team's extension folder: its path inside the folder and its bytes."""

    path: str
    content: bytes


class ExtensionError(ValueError):
    """An extension folder archform cannot take; the message says what and the hint how."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


def folder(blueprint_file: str, rel: str) -> Path:
    """The folder `rel` names, relative to the blueprint file's folder."""
    return Path(blueprint_file).parent / rel


def _files(root: Path, rel: str) -> list[tuple[str, Path]]:
    if not root.is_dir():
        raise ExtensionError(
            f"{rel!r} is not a folder (looked at {root})", "create it, or fix the path"
        )
    found: list[tuple[str, Path]] = []
    for path in sorted(root.rglob("*")):
        inner = path.relative_to(root).as_posix()
        if "__pycache__" in path.parts:
            continue
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            raise ExtensionError(
                f"{rel}/{inner} is a symlink or special file", "keep only regular files there"
            )
        if not all(_NAME.fullmatch(part) for part in inner.split("/")):
            raise ExtensionError(
                f"{rel}/{inner}: names may use letters, digits, '_', '.' and '-' only",
                "rename the file",
            )
        if path.is_file():
            found.append((inner, path))
    if len(found) > MAX_FILES:
        raise ExtensionError(f"{rel} holds {len(found)} files", f"keep at most {MAX_FILES}")
    return found


def _read(path: Path, rel: str, inner: str) -> bytes:
    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise ExtensionError(f"{rel}/{inner} is larger than 1 MiB", "split or shrink it")
    return data


def ansible_tasks(blueprint_file: str, rel: str) -> dict[str, list[ExtensionFile]]:
    """Task files per hook (every hook present, possibly empty), in name order."""
    out: dict[str, list[ExtensionFile]] = {hook: [] for hook in HOOKS}
    for inner, path in _files(folder(blueprint_file, rel), rel):
        hook, _, name = inner.partition("/")
        if hook not in HOOKS or "/" in name or not name.endswith((".yml", ".yaml")):
            raise ExtensionError(
                f"{rel}/{inner} is not <hook>/<name>.yml",
                f"put task files in {', '.join(h + '/' for h in HOOKS)} (one level deep)",
            )
        out[hook].append(ExtensionFile(inner, _read(path, rel, inner)))
    if not any(out.values()):
        raise ExtensionError(
            f"{rel} holds no task files", f"add e.g. {rel}/compute/10-site-packages.yml"
        )
    return out


def pulumi_package(blueprint_file: str, rel: str) -> list[ExtensionFile]:
    """The package's `.py` files, `__init__.py` required."""
    files = []
    for inner, path in _files(folder(blueprint_file, rel), rel):
        if not inner.endswith(".py"):
            raise ExtensionError(
                f"{rel}/{inner} is not a Python module", "keep only .py files in the package"
            )
        files.append(ExtensionFile(inner, _read(path, rel, inner)))
    if "__init__.py" not in {f.path for f in files}:
        raise ExtensionError(
            f"{rel} has no __init__.py",
            "add __init__.py with `def extend(**built): ...` (net, fs, nodes)",
        )
    return files
