"""Check `pulumi`: every Pulumi project in the tree runs under mocks with the real SDKs.

A project with a generated policy pack beside it (`policy/`, see
render/targets/policy/target.py) also gets a `policy` result: the pack's CrossGuard
policies evaluated on the resource graph the program registered (verify/policy_pack.py).

Each project runs in its own interpreter (clean Pulumi runtime state, a timeout). The real
provider classes build every resource, so a wrong argument name, a missing required
argument or a wrong container type fails the check (measured with pulumi-aws v7 under mocks;
no public source found). Invalid enum values are not caught: only the cloud provider
rejects those.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from archform.install import extra_hint
from archform.spec.provider import sdk_extras
from archform.verify import Check, Result
from archform.verify.policy_pack import PACK_DIR, pack_of

NAME = "pulumi"
POLICY = "policy"
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
        pack = pack_of(project)
        evaluate = pack is not None and importlib.util.find_spec("pulumi_policy") is not None
        try:
            run = run_in_subprocess(project, config, TIMEOUT_S, policy=evaluate)
        except RuntimeError as exc:
            results.append(Result(NAME, artifact, "failed", str(exc)))
            continue
        detail = f"{len(run.resources)} resources, {len(run.counts())} types"
        if mocked:
            detail += f"; mock config: {', '.join(mocked)}"
        results.append(Result(NAME, artifact, "passed", detail))
        if pack is not None:
            results.append(_policy_result(artifact, run.violations if evaluate else None))
    return results


def _policy_result(artifact: str, violations: list[dict[str, str]] | None) -> Result:
    where = f"{artifact}/{PACK_DIR}"
    if violations is None:
        # pulumi-policy comes with the first provider's extra and with kubernetes
        hint = extra_hint(sdk_extras()[0])
        return Result(POLICY, where, "skipped", f"needs pulumi-policy (hint: {hint})")
    if not violations:
        return Result(POLICY, where, "passed", "every policy holds on the recorded graph")
    lines = [f"[{v['policy']}] {v['message']}" for v in violations]
    return Result(POLICY, where, "failed", f"{len(lines)} violation(s): " + "; ".join(lines))


CHECK = Check(name=NAME, applies=_applies, run=_run)
