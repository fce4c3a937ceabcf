"""Reuse verify results: a check's results keyed by what it reads and the tools it runs.

A key is the SHA-256 of the check's name, archform's version, the identity of every tool
the check names (resolved path, size and modification time of the executable, so an
upgrade or another install is a new key), the collections path Ansible reads, and the
content of every file under the folder the check reads (relative path + SHA-256 of the
bytes, sorted). The key therefore says nothing about where the tree lives: an identical
tree, or an identical project inside another tree, is checked once.

Entries are JSON files under ``$ARCHFORM_VERIFY_CACHE``, else
``$XDG_CACHE_HOME/archform/verify``, else ``~/.cache/archform/verify``; written to a
temporary file and renamed (atomic on POSIX), so a reader never sees half an entry. An
entry that does not parse or has the wrong shape is ignored (and overwritten on the next
store). Results of a check that raised are never stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

from archform import __version__
from archform.verify import Result

FORMAT = 1
ENV = "ARCHFORM_VERIFY_CACHE"
# Environment that changes what a tool sees without changing the files or the tool.
ENV_INPUTS = ("ARCHFORM_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATH")
_STATUSES = ("passed", "failed", "skipped")
# Libraries the in-process checks run (Pulumi under mocks, kubernetes-validate, ...): their
# versions are part of every key, as the tools' executables are.
# Each provider's Pulumi SDK is added from the provider registry (`distributions`).
DISTRIBUTIONS = (
    "ansible-core",
    "ansible-lint",
    "checkov",
    "kubernetes-validate",
    "pulumi",
    "pulumi-kubernetes",
    "pulumi-policy",
)
_ENABLED = [False]


@contextmanager
def enabled(on: bool) -> Iterator[None]:
    """Reuse results inside this block when `on` (verify's runner sets it per run)."""
    before = _ENABLED[0]
    _ENABLED[0] = on
    try:
        yield
    finally:
        _ENABLED[0] = before


def is_enabled() -> bool:
    """Whether the current verify run reuses results."""
    return _ENABLED[0]


def distributions() -> tuple[str, ...]:
    """DISTRIBUTIONS and every provider's Pulumi SDK, sorted."""
    from archform.render.public import pulumi_sdks

    return tuple(sorted({*DISTRIBUTIONS, *pulumi_sdks().values()}))


def distribution_versions() -> list[str]:
    """`name=version` of each library in `distributions()` ('missing' when not installed)."""
    out = []
    for name in distributions():
        try:
            out.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name}=missing")
    return out


def cache_dir() -> Path:
    """Where entries live (see the module docstring)."""
    given = os.environ.get(ENV)
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "archform" / "verify"


def tool_identity(tools: Iterable[str]) -> list[str]:
    """One line per tool: its resolved executable with size and mtime, or 'missing'."""
    out = []
    for tool in sorted(set(tools)):
        found = shutil.which(tool)
        if found is None:
            out.append(f"{tool}=missing")
            continue
        real = Path(found).resolve()
        st = real.stat()
        out.append(f"{tool}={real}:{st.st_size}:{st.st_mtime_ns}")
    return out


def files_digest(folder: Path, skip: Callable[[Path], bool] | None = None) -> str:
    """SHA-256 over (relative path, content digest) of every file under `folder`, sorted."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder)
        if "__pycache__" in rel.parts or (skip is not None and skip(rel)):
            continue
        h.update(rel.as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def key(check: str, folder: Path, tools: Iterable[str], extra: Iterable[str] = ()) -> str:
    """The cache key of `check` over the files under `folder` (see the module docstring)."""
    parts = [f"format={FORMAT}", f"check={check}", f"archform={__version__}"]
    parts += tool_identity(tools)
    parts += distribution_versions()
    parts += [f"{name}={os.environ.get(name, '')}" for name in ENV_INPUTS]
    parts += list(extra)
    parts.append(f"files={files_digest(folder)}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def load(entry: str) -> list[Result] | None:
    """The stored results of `entry`, or None (absent, unreadable or not an entry)."""
    path = cache_dir() / entry[:2] / f"{entry}.json"
    try:
        data = json.loads(path.read_text("utf-8"))
        results = [
            Result(str(r["check"]), str(r["artifact"]), r["status"], str(r["detail"]))
            for r in data["results"]
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if data.get("format") != FORMAT or any(r.status not in _STATUSES for r in results):
        return None
    return results


def store(entry: str, results: list[Result]) -> None:
    """Write `results` for `entry` atomically; a check that raised is not stored."""
    if any(r.detail.startswith("check raised ") for r in results):
        return
    folder = cache_dir() / entry[:2]
    data = {
        "format": FORMAT,
        "results": [
            {"check": r.check, "artifact": r.artifact, "status": r.status, "detail": r.detail}
            for r in results
        ],
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    except OSError:  # a read-only or full cache never fails a verify run
        return
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, sort_keys=True)
        tmp.replace(folder / f"{entry}.json")
    except OSError:
        tmp.unlink(missing_ok=True)


def cached(
    check: str,
    folder: Path,
    tools: Iterable[str],
    compute: Callable[[], list[Result]],
    extra: Iterable[str] = (),
) -> tuple[list[Result], bool]:
    """`compute()`'s results, reused when the same inputs were checked before; (results, hit).

    Outside an enabled run (`enabled`), `compute()` runs and nothing is stored.
    """
    if not is_enabled():
        return compute(), False
    tools = tuple(tools)
    entry = key(check, folder, tools, extra)
    found = load(entry)
    if found is not None:
        return found, True
    results = compute()
    store(entry, results)
    return results, False
