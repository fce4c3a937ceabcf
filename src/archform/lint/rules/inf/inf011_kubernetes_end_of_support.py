"""The fleet's Kubernetes version is past, or close to, the end of its provider's support.

## What it does
Looks up `kubernetes.version` of an InferenceFleet in the provider's published version
calendar (EKS, GKE, AKS; `spec/data/kubernetes.yaml`, with sources) at today's date
(`archform lint --today`, `ARCHFORM_TODAY`, else the system date). It reports an error when
the version is past every support phase, a warning when it only lives on in the provider's
paid extended support (EKS extended support, AKS Long Term Support), and a warning when
standard support ends within `near_days` (default 90).

## Why is this bad?
Past the end of extended support the provider upgrades the control plane on its own
schedule (EKS auto-upgrades to the oldest extended version; GKE upgrades the cluster) or
stops supporting it (AKS): the upgrade then lands on a serving fleet unplanned, and node
pools that lag the control plane by more than the skew policy allows stop joining. EKS
extended support bills the control plane at six times the standard rate. A version
upgrades one minor at a time, so every release skipped is one more upgrade to run.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
kubernetes: {version: "1.30", api_access_cidrs: [10.0.0.0/8]}
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
kubernetes: {version: "1.36", api_access_cidrs: [10.0.0.0/8]}
```

## References
- EKS: https://docs.aws.amazon.com/eks/latest/userguide/kubernetes-versions.html
- GKE: https://cloud.google.com/kubernetes-engine/docs/release-schedule
- AKS: https://learn.microsoft.com/azure/aks/supported-kubernetes-versions
- Version skew: https://kubernetes.io/releases/version-skew-policy/
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import Field

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import Options, rule

LOC = ("kubernetes", "version")


class EndOfSupportOptions(Options):
    """Thresholds of INF011."""

    near_days: Annotated[int, Field(ge=0, le=730)] = 90


@rule(
    code="INF011",
    name="kubernetes-end-of-support",
    severity="warning",
    options=EndOfSupportOptions,
)
def check(ctx: RuleContext, options: EndOfSupportOptions) -> Iterator[Hit]:
    """Versions past or near the end of the provider's support at `ctx.today`."""
    for doc, fleet in ctx.fleets():
        # the calendars are read only when a fleet is linted (start-up of training-only lint)
        from archform.spec.kubernetes import calendar, minor, support

        provider = fleet.placement.provider
        cal = calendar(provider)
        if cal is None:
            continue
        version = fleet.kubernetes.version
        at = None if ctx.written(doc, LOC) else ctx.first_written(doc, ("kubernetes",), ("kind",))
        supported = cal.supported(ctx.today)
        fix = (
            f"upgrade to {supported[-1]} (in standard support on {cal.service} until "
            f"{cal.versions[supported[-1]].standard_end}), one minor version at a time"
            if supported
            else f"upgrade to a version in standard support; see {cal.calendar}"
        )
        state = support(provider, version, ctx.today)
        if state is None:
            oldest = min(cal.versions, key=minor)
            if minor(version) < minor(oldest):
                yield Hit(
                    doc,
                    LOC,
                    f"Kubernetes {version} is older than every version {cal.service} supports "
                    f"(oldest in its calendar: {oldest}); expected a supported version",
                    fix,
                    severity="error",
                    at=at,
                )
            continue
        life = state.life
        if state.phase == "unsupported":
            ended = life.extended_end or life.standard_end
            yield Hit(
                doc,
                LOC,
                f"Kubernetes {version} reached the end of {cal.service} support on {ended} "
                f"(today {ctx.today}; {cal.calendar}); expected a supported version",
                fix,
                severity="error",
                at=at,
            )
        elif state.phase == "extended":
            yield Hit(
                doc,
                LOC,
                f"Kubernetes {version} left {cal.service} standard support on "
                f"{life.standard_end} and lives on {cal.extended_name} until {state.ends} "
                f"({state.days_left} days; {cal.calendar}); expected standard support",
                fix,
                at=at,
            )
        elif state.days_left is not None and state.days_left <= options.near_days:
            yield Hit(
                doc,
                LOC,
                f"Kubernetes {version} leaves {cal.service} standard support on {state.ends}, "
                f"in {state.days_left} days; threshold: {options.near_days} days "
                f"({cal.calendar})",
                fix,
                at=at,
            )
