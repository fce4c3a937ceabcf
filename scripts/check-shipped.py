#!/usr/bin/env python3
"""Gate for the shipped code archform copies verbatim: templates/ and each provider's own.

Shipped files live in the shared templates/ and in each provider package's templates/
folder (src/archform/providers/<name>/templates/). ruff and ruff format read both directly
(./dev check: templates, src); this adds what they cannot:
mypy --strict over each generated program (its modules import each other by bare name, so
each program is checked on its own search path), `bash -n` and shellcheck over every shell
script (a file ending in .sh or starting with a shell #! line). Without shellcheck on PATH the
shell scripts get `bash -n` only, said on stdout; with ARCHFORM_REQUIRE_TOOLS=1 (CI) a missing
shellcheck is a failure. Every shipped .py must belong to one program below, so new shipped code
cannot escape mypy. Exit 0 clean, 1 on findings.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ROOT / "templates"
PROVIDERS = ROOT / "src" / "archform" / "providers"
CONFIG = ROOT / "scripts" / "shipped-mypy.ini"

# Shared programs: name -> (folders whose .py files form it, extra folders on its import path)
SHARED: dict[str, tuple[list[Path], list[Path]]] = {
    "pulumi-fleet": ([TEMPLATES / "pulumi/fleet"], []),
    "ansible-filters": ([TEMPLATES / "ansible/filter_plugins"], []),
    "policy-pack": ([TEMPLATES / "policy"], []),
}
# A provider's training program (its templates/pulumi/) imports the shared modules beside it;
# its policy module (templates/policy/cloud.py) imports the shared policy core.
COMMON = {"pulumi": [TEMPLATES / "pulumi/common"], "policy": [TEMPLATES / "policy"]}
SHELLS = ("#!/bin/sh", "#!/bin/bash", "#!/usr/bin/env bash", "#!/usr/bin/env sh")


def provider_roots() -> list[Path]:
    """Each provider package's own templates/ folder (providers without one have none)."""
    return sorted(p for p in PROVIDERS.glob("*/templates") if (p.parent / "__init__.py").is_file())


def roots() -> list[Path]:
    """Every folder of shipped files: the shared templates/, then each provider's."""
    return [TEMPLATES, *provider_roots()]


def programs() -> dict[str, tuple[list[Path], list[Path]]]:
    """The shared programs, and one per folder of .py files in each provider's templates/."""
    out = dict(SHARED)
    for root in provider_roots():
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and any(p.glob("*.py"))):
            out[f"{root.parent.name}-{folder.name}"] = ([folder, *COMMON.get(folder.name, [])], [])
    return out


def shipped_python() -> list[Path]:
    """Every real .py in the shipped folders (templates end in .j2)."""
    return sorted(p for root in roots() for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def shell_scripts() -> list[Path]:
    """Every shipped shell script: *.sh, or a file without suffix opening with a shell #!."""
    found = []
    for path in sorted(p for root in roots() for p in root.rglob("*")):
        if not path.is_file() or path.name.endswith(".j2"):
            continue
        if path.suffix == ".sh":
            found.append(path)
        elif not path.suffix:
            first = path.read_text("utf-8", errors="replace").split("\n", 1)[0]
            if first.startswith(SHELLS):
                found.append(path)
    return found


SHELLCHECK_MISSING = "ARCHFORM_REQUIRE_TOOLS=1 but shellcheck is not on PATH (see .ci/run)"
SHELLCHECK_SKIPPED = "skipped shellcheck (not on PATH; apt-get install shellcheck): bash -n only"


def find_shellcheck(environ: Mapping[str, str]) -> tuple[str | None, bool]:
    """(shellcheck on environ's PATH or None, whether it is required: ARCHFORM_REQUIRE_TOOLS=1)."""
    found = shutil.which("shellcheck", path=environ.get("PATH", ""))
    return found, environ.get("ARCHFORM_REQUIRE_TOOLS") == "1"


def check_shell(scripts: list[Path], shellcheck: str | None) -> bool:
    """`bash -n` each script, then shellcheck it (warnings and errors) when `shellcheck` is set.

    Each script is checked as the shell its #! line names (shellcheck reads the line itself).
    """
    ok = True
    for script in scripts:
        syntax_ok = run(["bash", "-n", str(script)])
        ok &= syntax_ok
        if syntax_ok and shellcheck:
            ok &= run([shellcheck, "--severity=warning", "--external-sources", str(script)])
    return ok


def run(cmd: list[str], env: dict[str, str] | None = None) -> bool:
    """Run a check; print its output on failure."""
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        sys.stdout.write(done.stdout + done.stderr)
    return done.returncode == 0


def main() -> int:
    """Run every check; 1 if any fails."""
    ok = True
    covered: set[Path] = set()
    for name, (folders, extra) in programs().items():
        files = sorted(p for f in folders for p in f.glob("*.py"))
        covered.update(files)
        path = os.pathsep.join(str(f) for f in folders + extra)
        env = {**os.environ, "MYPYPATH": path}
        # Module names come from the program's folders, not from the archform package a
        # provider's templates/ sits in (its __init__.py files would make them archform.*).
        cmd = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(CONFIG),
            "--explicit-package-bases",
        ]
        cmd += ["--cache-dir", str(ROOT / ".mypy_cache" / "shipped" / name)]
        if not run(cmd + [str(p) for p in files], env):
            print(f"mypy: {name} failed")
            ok = False
    for stray in sorted(set(shipped_python()) - covered):
        print(f"{stray.relative_to(ROOT)}: shipped .py in no program of scripts/check-shipped.py")
        ok = False
    shellcheck, required = find_shellcheck(os.environ)
    ok &= check_shell(shell_scripts(), shellcheck)
    if shellcheck is None:
        print(SHELLCHECK_MISSING if required else SHELLCHECK_SKIPPED)
        ok &= not required
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
