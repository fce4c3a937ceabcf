"""How this copy of archform was installed, and the command that adds an extra to it.

Every "install X" hint (plan, verify, deploy, promote) comes from here, so a hint names a
command that works for the copy the user runs:

- ``pipx``: the interpreter's environment holds ``pipx_metadata.json`` (pipx writes it into
  every venv it manages). Extras are added with ``pipx inject <venv> REQUIREMENT...``, the
  requirements read from this copy's own metadata (pipx injects packages, not extras).
- ``clone``: the package is imported from a source tree (``src/archform`` beside the
  repository's ``pyproject.toml`` and ``dev``), an editable install or ``PYTHONPATH=src``.
  Extras come from ``./dev install EXTRA`` when the running interpreter is the one ``./dev``
  manages (``.venv`` or ``$ARCHFORM_VENV``), else from ``pip install -e``.
- ``pip``: any other pip install, into a venv or not. The hint runs pip with this
  interpreter, and names the source the copy came from when it was not an index
  (PEP 610 ``direct_url.json``: a clone folder, a wheel file, a URL).

Checkov is different: it pins boto3 exactly, so it goes into an environment of its own
(``pipx install`` or ``./dev install checkov``) and is found on PATH.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

Kind = Literal["pipx", "clone", "pip"]

DIST = "archform"
PIPX_METADATA = "pipx_metadata.json"
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


@dataclass(frozen=True, slots=True)
class Install:
    """Where the running archform came from."""

    kind: Kind
    python: str
    prefix: Path
    tree: Path | None = None  # the source tree of a clone
    url: str | None = None  # PEP 610 URL of a pip install from a folder, file or VCS


def _package_dir() -> Path:
    return Path(__file__).resolve().parent


def _source_tree(package: Path) -> Path | None:
    tree = package.parent.parent
    if package.parent.name == "src" and (tree / "pyproject.toml").is_file():
        return tree
    return None


def _distribution() -> metadata.Distribution | None:
    try:
        return metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        return None


def _direct_url(dist: metadata.Distribution | None) -> dict[str, object]:
    text = dist.read_text("direct_url.json") if dist is not None else None
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def detect() -> Install:
    """The install kind of the running copy (see the module docstring)."""
    prefix = Path(sys.prefix)
    python = sys.executable or "python3"
    if (prefix / PIPX_METADATA).is_file():
        return Install("pipx", python, prefix)
    tree = _source_tree(_package_dir())
    if tree is not None:
        return Install("clone", python, prefix, tree=tree)
    direct = _direct_url(_distribution())
    url = direct.get("url")
    return Install("pip", python, prefix, url=url if isinstance(url, str) else None)


def extra_requirements(extra: str, dist: metadata.Distribution | None = None) -> list[str]:
    """The requirements an extra adds, from this copy's metadata (nested extras expanded)."""
    dist = dist if dist is not None else _distribution()
    if dist is None:
        return []
    out: list[str] = []
    seen: set[str] = set()

    def expand(name: str) -> None:
        if name in seen:
            return
        seen.add(name)
        for req in dist.requires or []:
            spec, _, marker = req.partition(";")
            found = _EXTRA_MARKER.search(marker)
            if found is None or found.group(1) != name:
                continue
            spec = spec.strip()
            self_ref = re.fullmatch(r"archform\s*\[([^\]]+)\]\s*", spec, flags=re.IGNORECASE)
            if self_ref:
                for inner in self_ref.group(1).split(","):
                    expand(inner.strip())
            elif spec not in out:
                out.append(spec)

    expand(extra)
    return out


def _dev_venv(tree: Path) -> Path:
    venv = os.environ.get("ARCHFORM_VENV") or ".venv"
    path = Path(venv)
    return path if path.is_absolute() else tree / path


def _dev_script(tree: Path) -> str:
    try:
        same = Path.cwd().resolve() == tree.resolve()
    except OSError:
        same = False
    return "./dev" if same else shlex.quote(str(tree / "dev"))


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _spec(extras: str, url: str | None) -> str:
    if url is None:
        return f"archform[{extras}]"
    parsed = urlparse(url)
    if parsed.scheme == "file" and Path(unquote(parsed.path)).exists():
        return f"{unquote(parsed.path)}[{extras}]"
    return f"archform[{extras}] @ {url}"


def extra_hint(*extras: str, install: Install | None = None) -> str:
    """The command that adds these extras to the running archform."""
    inst = install if install is not None else detect()
    names = sorted(dict.fromkeys(extras))
    joined = ",".join(names)
    if inst.kind == "pipx":
        reqs = [r for name in names for r in extra_requirements(name)]
        if reqs:
            quoted = " ".join(shlex.quote(r) for r in dict.fromkeys(reqs))
            return f"pipx inject {shlex.quote(inst.prefix.name)} {quoted}"
        return f"pipx install --force {shlex.quote(f'archform[{joined}]')}"
    python = shlex.quote(inst.python)
    if inst.kind == "clone" and inst.tree is not None:
        if _same(inst.prefix, _dev_venv(inst.tree)):
            return f"{_dev_script(inst.tree)} install {joined}"
        return f"{python} -m pip install -e {shlex.quote(f'{inst.tree}[{joined}]')}"
    return f"{python} -m pip install {shlex.quote(_spec(joined, inst.url))}"


def checkov_hint(install: Install | None = None) -> str:
    """How to put Checkov on PATH: in an environment of its own (it pins boto3 exactly)."""
    inst = install if install is not None else detect()
    if inst.kind == "clone" and inst.tree is not None:
        return f"{_dev_script(inst.tree)} install checkov"
    reqs = extra_requirements("checkov") or ["checkov>=3.2,<4"]
    return f"pipx install {shlex.quote(reqs[0])} (its own venv: checkov pins boto3)"


def collections_hint(install: Install | None = None) -> str:
    """How to get the Ansible collections the generated playbooks use."""
    inst = install if install is not None else detect()
    if inst.kind == "clone" and inst.tree is not None:
        # ./dev install ansible vendors them into the clone's .cache/ (found there)
        return f"{_dev_script(inst.tree)} install ansible"
    return (
        "ansible-galaxy collection install ansible.posix community.general "
        "(or set ARCHFORM_COLLECTIONS_PATH to a folder holding them)"
    )


def slurm_hint(env: str, install: Install | None = None) -> str:
    """How to get Slurm parsers for the slurm check (system packages, not a pip extra)."""
    inst = install if install is not None else detect()
    build = ""
    if inst.kind == "clone" and inst.tree is not None:
        build = f", run {shlex.quote(str(inst.tree / 'scripts' / 'build-slurm.sh'))} VERSION"
    return f"apt-get install slurmctld slurm-client{build}, or set {env} to a Slurm prefix"
