"""A suppression whose expiry date has passed.

## What it does
Flags a `lint.ignore` entry whose `expires` date is before today. The expired entry no
longer suppresses anything: its findings are reported again. Tests and reproducible CI
runs can fix "today" with the environment variable `ARCHFORM_TODAY=YYYY-MM-DD`.

## Why is this bad?
Suppressions are debts with a due date. When the date passes, the owner has to decide
again: fix the blueprint, or renew the entry with a new date and reason.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [eu-central-1]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
lint:
  ignore:
    - rule: INF001
      reason: "data residency: EU only"
      owner: ml-platform
      expires: 2020-01-31
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [eu-central-1]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
lint:
  ignore:
    - rule: INF001
      reason: "data residency: EU only"
      owner: ml-platform
      expires: 2099-01-31
```

## References
- Trivy, ignore file entries with `expired_at`:
  https://trivy.dev/latest/docs/configuration/filtering/
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="LNT001", name="expired-suppression", severity="error", phase="suppressions")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Expired lint.ignore entries."""
    for state in ctx.suppressions:
        if state.expired:
            entry = state.entry
            owner = f" (owner {entry.owner})" if entry.owner else ""
            yield Hit(
                state.doc,
                ("lint", "ignore", state.index, "expires"),
                f"suppression of {entry.rule}{owner} expired on {entry.expires}; today is "
                f"{ctx.today}, so its findings are reported again",
                "fix the finding and delete the entry, or renew `expires` with a fresh reason",
                value=[entry.rule, str(entry.expires)],
            )
