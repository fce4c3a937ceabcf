"""Every task result a generated role reads was registered by a task of that role.

A result read but never registered (`x.content`, `x.stdout`, `x.stat`, ...) is undefined
when the task runs and stops the play: the build-path bootstrap met exactly that when the
accounting database tasks were lost from slurmdbd.yml (slurm_dbd_password_slurp). This
walks the generated trees of every bundled blueprint, so it fails without a bootstrap.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from archform.render.generate import build_files
from archform.spec import load_paths
from support import bundled_blueprints

READ = re.compile(
    r"(?<![.\w])([a-z][a-z0-9_]*)\.(content|stdout|stdout_lines|stderr|rc|stat|results|matched|files)\b"
)
REGISTER = re.compile(r"^\s*register:\s*([a-z][a-z0-9_]*)\s*$", re.MULTILINE)
LOOP_VAR = re.compile(r"^\s*loop_var:\s*([a-z][a-z0-9_]*)\s*$", re.MULTILINE)


def _roles(stem: str) -> dict[str, list[str]]:
    """Role folder -> texts of its task and handler files (the whole tree for playbooks)."""
    path = next(p for p in bundled_blueprints() if p.stem == stem)
    out: dict[str, list[str]] = defaultdict(list)
    for f in build_files(load_paths([path])):
        parts = f.path.split("/")
        if not f.path.endswith((".yml", ".yaml")) or "ansible" not in parts:
            continue
        if "roles" in parts:
            i = parts.index("roles")
            if len(parts) > i + 2 and parts[i + 2] in ("tasks", "handlers"):
                out["/".join(parts[: i + 2])].append(f.content.decode("utf-8"))
        elif len(parts) >= 2 and parts[-2] == "ansible":
            out["/".join(parts[:-1]) + "/<playbooks>"].append(f.content.decode("utf-8"))
    return out


@pytest.mark.parametrize("stem", sorted(p.stem for p in bundled_blueprints()))
def test_every_result_read_is_registered_in_its_role(stem: str) -> None:
    roles = _roles(stem)
    assert any(r.endswith("roles/slurm") for r in roles) or stem.startswith("inference")
    missing = {}
    for role, texts in roles.items():
        text = "\n".join(texts)
        known = set(REGISTER.findall(text)) | set(LOOP_VAR.findall(text)) | {"item"}
        read = {m.group(1) for m in READ.finditer(text)}
        # ansible_facts and hostvars-style names are not task results
        unknown = sorted(n for n in read - known if not n.startswith(("ansible_", "hostvars")))
        if unknown:
            missing[role] = unknown
    assert not missing, missing
