"""A suppression that suppressed nothing.

## What it does
Flags a `lint.ignore` entry that matched no finding of its rule in its document, or that
names a rule code archform does not have. The suppressed rule is run even when it is not
selected on the command line, so the verdict depends on the blueprint only. LNT rules
themselves cannot be suppressed: an entry for LNT001 or LNT002 is always unused.

## Why is this bad?
A stale suppression hides the next, unrelated finding of the same rule in that document,
and tells readers a problem exists that no longer does.

## Example
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1, eu-west-2]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
lint:
  ignore:
    - rule: INF001
      reason: "single region during the pilot"
```

## Use instead
```yaml
version: 1
kind: InferenceFleet
name: demo
placement: {provider: aws, regions: [us-east-1]}
model: {name: llama-3.1-8b, params: 8e9, source: "s3://models/llama/"}
server: {image: "vllm/vllm-openai:v0.6.3"}
gpu_pool: {instance_type: g6.xlarge, min_nodes_per_region: 2, max_nodes_per_region: 8}
lint:
  ignore:
    - rule: INF001
      reason: "single region during the pilot"
```

## References
- Ruff, RUF100 unused-noqa: https://docs.astral.sh/ruff/rules/unused-noqa/
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule


@rule(code="LNT002", name="unused-suppression", severity="warning", phase="suppressions")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """lint.ignore entries that matched nothing."""
    for state in ctx.suppressions:
        if state.expired or not state.judged or state.used:
            continue
        entry = state.entry
        why = (
            f"{entry.rule} is not an archform rule"
            if not state.known
            else f"{entry.rule} reports nothing in {state.doc.name!r}"
        )
        yield Hit(
            state.doc,
            ("lint", "ignore", state.index, "rule"),
            f"unused suppression: {why}",
            "delete the entry",
            value=entry.rule,
        )
