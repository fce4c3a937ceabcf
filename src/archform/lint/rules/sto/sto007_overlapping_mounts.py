"""Two storage entries mount at the same or nested paths.

## What it does
Flags a storage entry whose `mount` equals, or lies inside or above, another entry's
mount.

## Why is this bad?
The later mount hides the earlier one (or part of it): jobs write checkpoints into the
wrong file system, or a dataset disappears under a home directory. ParallelCluster rejects
this (DuplicateMountDirValidator, OverlappingMountDirValidator).

## Example
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 1
  gpu: {model: H100, per_node: 8}
fabric: {kind: ethernet, gbps_per_node: 100}
storage:
  - name: data
    kind: lustre
    purpose: training_data
    capacity_tib: 100
    mount: /lustre
  - name: ckpt
    kind: lustre
    purpose: checkpoints
    capacity_tib: 50
    mount: /lustre/ckpt
```

## Use instead
```yaml
version: 1
kind: TrainingCluster
name: demo
placement: {provider: onprem, region: lab}
compute:
  nodes: 1
  gpu: {model: H100, per_node: 8}
fabric: {kind: ethernet, gbps_per_node: 100}
storage:
  - name: data
    kind: lustre
    purpose: training_data
    capacity_tib: 100
    mount: /lustre/data
  - name: ckpt
    kind: lustre
    purpose: checkpoints
    capacity_tib: 50
    mount: /lustre/ckpt
```

## References
- AWS ParallelCluster DuplicateMountDirValidator and OverlappingMountDirValidator:
  https://github.com/aws/aws-parallelcluster/blob/develop/cli/src/pcluster/validators/cluster_validators.py
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster


def _nested(a: str, b: str) -> bool:
    a, b = a.rstrip("/") or "/", b.rstrip("/") or "/"
    return a == b or b.startswith(a.rstrip("/") + "/") or a.startswith(b.rstrip("/") + "/")


@rule(code="STO007", name="overlapping-mounts", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Same or nested mount paths."""
    for doc, tc in ctx.documents(TrainingCluster):
        seen: list[tuple[str, str]] = []
        for i, store in enumerate(tc.storage):
            if store.mount is None:
                continue
            for name, mount in seen:
                if _nested(mount, store.mount):
                    how = (
                        "the same path as"
                        if mount.rstrip("/") == store.mount.rstrip("/")
                        else ("nested with")
                    )
                    yield Hit(
                        doc,
                        ("storage", i, "mount"),
                        f"mount {store.mount} of {store.name!r} is {how} {mount} of {name!r}; "
                        "expected disjoint mount paths",
                        f"mount {store.name!r} at a sibling path, e.g. {mount.rstrip('/')}-"
                        f"{store.name}",
                    )
                    break
            seen.append((store.name, store.mount))
