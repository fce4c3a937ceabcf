"""Where the Ansible collections the generated playbooks use are found (no Galaxy needed).

Shared by `archform verify` and `archform deploy`; scripts/vendor-collections.sh fills a
folder from the `ansible` wheel on PyPI.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

COLLECTIONS = ("ansible/posix", "community/general")


def collections_path(extra: Iterable[Path] = ()) -> str | None:
    """A collections path holding ansible.posix and community.general, or None.

    Looks at ARCHFORM_COLLECTIONS_PATH, ANSIBLE_COLLECTIONS_PATH, the given folders' and a
    development checkout's `.cache/`, the current folder's `.cache/`, then Ansible's defaults.
    """
    candidates: list[str] = []
    for var in ("ARCHFORM_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATH"):
        candidates += [p for p in os.environ.get(var, "").split(os.pathsep) if p]
    source_tree = Path(__file__).resolve().parents[2]
    candidates += [str(p / ".cache") for p in extra]
    candidates += [
        str(source_tree / ".cache"),
        str(Path.cwd() / ".cache"),
        str(Path.home() / ".ansible" / "collections"),
        "/usr/share/ansible/collections",
    ]
    for path in candidates:
        base = Path(path)
        if base.name != "ansible_collections":
            base = base / "ansible_collections"
        if all((base / c / "MANIFEST.json").is_file() for c in COLLECTIONS):
            return str(base.parent)
    return None
