"""Find the Slurm parsers (slurmctld + scontrol) installed here, and pick one per blueprint.

Setting: ARCHFORM_SLURM_PREFIXES, a list of install prefixes separated by ':' (each may be
a glob), searched before the defaults /usr and /opt/archform/slurm/* (where
scripts/build-slurm.sh installs 24.11.5 and 26.05.5). A prefix counts when it has
sbin/slurmctld and bin/scontrol and `slurmctld -V` prints a Slurm version. One parser per
release is kept, the first found.

The declared version is validated by its own release's parser when one is installed;
otherwise by the nearest older and the nearest newer installed parsers, each on the files
re-rendered for its release (archform.spec.slurm.nearest_releases).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from archform.spec import slurm
from archform.spec.slurm import SlurmVersion

ENV = "ARCHFORM_SLURM_PREFIXES"
DEFAULTS = ("/usr", "/opt/archform/slurm/*")


@dataclass(frozen=True)
class Parser:
    """One installed Slurm: its version and the two commands the check runs."""

    version: SlurmVersion
    prefix: Path
    slurmctld: Path
    scontrol: Path

    def describe(self) -> str:
        """'slurmctld 24.11.5 (/opt/archform/slurm/24.11.5)'."""
        return f"slurmctld {self.version} ({self.prefix})"


def _expand(pattern: str) -> list[str]:
    """An absolute prefix, or the sorted matches of a glob in its last component."""
    path = Path(pattern)
    if not any(c in path.name for c in "*?["):
        return [pattern]
    return sorted(str(p) for p in path.parent.glob(path.name) if p.is_dir())


def prefixes() -> list[str]:
    """Prefixes searched, in order: ARCHFORM_SLURM_PREFIXES, then the defaults."""
    listed = [p for p in os.environ.get(ENV, "").split(os.pathsep) if p.strip()]
    out: list[str] = []
    for pattern in [*listed, *DEFAULTS]:
        for path in _expand(pattern):
            if path not in out:
                out.append(path)
    return out


def _probe(prefix: str) -> Parser | None:
    ctld, ctl = Path(prefix) / "sbin" / "slurmctld", Path(prefix) / "bin" / "scontrol"
    if not (os.access(ctld, os.X_OK) and os.access(ctl, os.X_OK)):
        return None
    try:
        proc = subprocess.run([str(ctld), "-V"], capture_output=True, text=True, timeout=30)
        version = slurm.parse_version(proc.stdout or proc.stderr)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None
    return Parser(version, Path(prefix), ctld, ctl)


@cache
def _discover(search: tuple[str, ...]) -> tuple[Parser, ...]:
    found: dict[str, Parser] = {}
    for prefix in search:
        parser = _probe(prefix)
        if parser is not None and parser.version.release not in found:
            found[parser.version.release] = parser
    return tuple(sorted(found.values(), key=lambda p: p.version))


def installed() -> list[Parser]:
    """Every installed parser, oldest first, one per release."""
    return list(_discover(tuple(prefixes())))


def choose(declared: SlurmVersion, parsers: list[Parser] | None = None) -> list[Parser]:
    """The declared release's parser, else the nearest older and newer ones."""
    have = installed() if parsers is None else parsers
    picked = slurm.nearest_releases(declared, [p.version for p in have])
    return [p for p in have if p.version in picked]
