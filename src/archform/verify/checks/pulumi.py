"""Check `pulumi`: every Pulumi project in the tree runs under mocks with the real SDKs.

Each project runs in its own interpreter (clean Pulumi runtime state, a timeout). The real
provider classes build every resource, so a wrong argument name, a missing required
argument or a wrong container type fails the check (validation-tooling.md s1). Invalid
enum values are not caught: only the cloud provider rejects those.
"""

from __future__ import annotations

from pathlib import Path

from archform.verify import Check, Result

NAME = "pulumi"
TIMEOUT_S = 300.0


def _applies(root: Path) -> bool:
    return any(root.rglob("Pulumi.yaml"))


def _run(root: Path) -> list[Result]:
    from archform.verify.pulumi_projects import (
        dry_run_config,
        find_projects,
        install_hint,
        missing_sdks,
        run_in_subprocess,
    )

    results: list[Result] = []
    for project in find_projects(root):
        artifact = project.relative_to(root).as_posix() or "."
        missing = missing_sdks(project)
        if missing:
            detail = f"needs {', '.join(missing)} ({install_hint(missing)})"
            results.append(Result(NAME, artifact, "skipped", detail))
            continue
        config, mocked = dry_run_config(project)
        try:
            run = run_in_subprocess(project, config, TIMEOUT_S)
        except RuntimeError as exc:
            results.append(Result(NAME, artifact, "failed", str(exc)))
            continue
        detail = f"{len(run.resources)} resources, {len(run.counts())} types"
        if mocked:
            detail += f"; mock config: {', '.join(mocked)}"
        results.append(Result(NAME, artifact, "passed", detail))
    return results


CHECK = Check(name=NAME, applies=_applies, run=_run)
