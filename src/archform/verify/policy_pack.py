"""Evaluate a generated CrossGuard policy pack on a program's mock-recorded resource graph.

The pack's `policies.py` defines POLICIES (pulumi_policy ResourceValidationPolicy and
StackValidationPolicy objects). Each recorded resource becomes the argument bag the Pulumi
engine would pass: ResourceValidationArgs per resource (props = the recorded inputs), and
one StackValidationArgs whose PolicyResources carry the recorded URNs, providers, parents
and dependencies. What the validators report is what `pulumi preview --policy-pack` would
report for the same inputs (the engine also passes provider-computed outputs to stack
policies; the mock fills a few of those with placeholders).
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archform.verify.pulumi_mock import MockResource

PACK_DIR = "policy"
POLICIES_FILE = "policies.py"


@dataclass(frozen=True, slots=True)
class Violation:
    """One policy violation."""

    policy: str
    message: str
    urn: str


def pack_of(project: Path) -> Path | None:
    """The policy pack generated beside a program, if any."""
    pack = project / PACK_DIR
    return (
        pack
        if (pack / "PulumiPolicy.yaml").is_file() and (pack / POLICIES_FILE).is_file()
        else None
    )


def load_policies(pack: Path) -> list[Any]:
    """Import the pack's policies.py under a private module name; return POLICIES.

    policies.py imports the modules beside it by bare name (pack_settings, policy_core, each
    cloud's module): every one of them is imported fresh from this pack and forgotten
    afterwards, so packs of different programs never share a module.
    """
    name = f"_archform_policy_pack_{abs(hash(str(pack.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, pack / POLICIES_FILE)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {pack / POLICIES_FILE}")
    module = importlib.util.module_from_spec(spec)
    own = {p.stem for p in pack.glob("*.py")} - {"__main__"}
    saved = {m: sys.modules.pop(m) for m in own if m in sys.modules}
    sys.modules[name] = module
    sys.path.insert(0, str(pack))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
        for m in own:
            sys.modules.pop(m, None)
        sys.modules.update(saved)
        sys.path.remove(str(pack))
    return list(module.POLICIES)


def _provider_urn(ref: str) -> str:
    """A provider reference is '<urn>::<id>'."""
    return ref.rsplit("::", 1)[0] if ref.count("::") > 3 else ref


def _options(resource: MockResource) -> Any:
    from pulumi_policy import PolicyCustomTimeouts, PolicyResourceOptions

    timeouts = dict(resource.custom_timeouts)
    return PolicyResourceOptions(
        protect=False,
        ignore_changes=[],
        delete_before_replace=None,
        aliases=[],
        custom_timeouts=PolicyCustomTimeouts(
            timeouts.get("create", 0), timeouts.get("update", 0), timeouts.get("delete", 0)
        ),
        additional_secret_outputs=[],
        parent=resource.parent or None,
    )


def _await(result: Any) -> None:
    if inspect.isawaitable(result):
        asyncio.run(_wrap(result))


async def _wrap(result: Any) -> None:
    await result


def evaluate(
    policies: list[Any],
    resources: list[MockResource],
    config: dict[str, dict[str, Any]] | None = None,
) -> list[Violation]:
    """Run every policy on the recorded resources; return the violations in order."""
    from pulumi_policy import (
        PolicyProviderResource,
        PolicyResource,
        ResourceValidationArgs,
        ResourceValidationPolicy,
        StackValidationArgs,
        StackValidationPolicy,
    )

    config = config or {}
    by_urn = {r.urn: r for r in resources if r.urn}

    def provider_of(r: MockResource) -> Any:
        ref = by_urn.get(_provider_urn(r.provider)) if r.provider else None
        if ref is None:
            return None
        return PolicyProviderResource(ref.type, ref.inputs, ref.urn, ref.name)

    stack = {
        r.urn: PolicyResource(
            r.type, r.inputs, r.urn, r.name, _options(r), provider_of(r), None, [], {}
        )
        for r in resources
        if r.urn
    }
    for r in resources:
        if r.urn:
            stack[r.urn].dependencies.extend(stack[d] for d in r.dependencies if d in stack)
            stack[r.urn].parent = stack.get(r.parent)
    found: list[Violation] = []
    for policy in policies:
        own = config.get(policy.name, {})

        def report(message: str, urn: str | None = None, _name: str = policy.name) -> None:
            found.append(Violation(_name, message, urn or ""))

        if isinstance(policy, ResourceValidationPolicy):
            for r in resources:
                args = ResourceValidationArgs(
                    r.type, r.inputs, r.urn, r.name, _options(r), provider_of(r), own
                )

                def report_here(message: str, urn: str | None = None, _urn: str = r.urn) -> None:
                    report(message, urn or _urn)

                _await(policy.validate(args, report_here))
        elif isinstance(policy, StackValidationPolicy):
            _await(policy.validate(StackValidationArgs(list(stack.values()), own), report))
    return found
