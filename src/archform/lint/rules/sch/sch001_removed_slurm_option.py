"""A raw Slurm override uses an option removed in the declared Slurm version.

## What it does
Checks `scheduler.slurm_conf` against options and values that the declared
`scheduler.version` no longer accepts:

| option / value | removed in |
|---|---|
| `SelectType=select/cons_res` | 23.11 (cons_tres is the default) |
| `CgroupAutomount` | 23.11 |
| `BlockLevels` | 24.05 |
| `TopologyPlugin=topology/default` | 25.05 (renamed topology/flat) |

## Why is this bad?
slurmctld refuses to start (or ignores the line with an error) on removed options, so the
cluster comes up without a scheduler after an upgrade that looked harmless.

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
scheduler:
  version: "23.11"
  slurm_conf:
    SelectType: select/cons_res
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
scheduler:
  version: "23.11"
  slurm_conf:
    SelectType: select/cons_tres
```

## References
- Slurm 23.11 RELEASE_NOTES: https://github.com/SchedMD/slurm/blob/slurm-23-11-0-1/RELEASE_NOTES
- slurm.conf(5): https://slurm.schedmd.com/slurm.conf.html
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec.models.training import TrainingCluster

# (option lower-case, value lower-case or None for any value) -> (removed in, replacement)
REMOVED: dict[tuple[str, str | None], tuple[tuple[int, int], str]] = {
    ("selecttype", "select/cons_res"): ((23, 11), "SelectType=select/cons_tres"),
    ("cgroupautomount", None): ((23, 11), "drop it; cgroup mounts are automatic"),
    ("blocklevels", None): ((24, 5), "drop it (topology/block uses BlockSizes)"),
    ("topologyplugin", "topology/default"): ((25, 5), "TopologyPlugin=topology/flat"),
}


@rule(code="SCH001", name="removed-slurm-option", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """Removed slurm.conf options for the declared version."""
    for doc, tc in ctx.documents(TrainingCluster):
        sched = tc.scheduler
        if sched.kind != "slurm":
            continue
        version = sched.version_tuple
        for key, value in sched.slurm_conf.items():
            text = str(value).lower()
            for (option, bad), (removed, instead) in REMOVED.items():
                if key.lower() != option or (bad is not None and text != bad):
                    continue
                if version >= removed:
                    shown = f"{key}={value}" if bad else key
                    yield Hit(
                        doc,
                        ("scheduler", "slurm_conf", key),
                        f"{shown} was removed in Slurm {removed[0]}.{removed[1]:02d}; the "
                        f"blueprint declares Slurm {sched.version}",
                        f"use {instead}",
                    )
