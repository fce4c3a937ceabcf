"""A raw slurm.conf override that the declared Slurm version does not accept.

## What it does
Checks every key of `scheduler.slurm_conf` against the option table of the declared
`scheduler.version`, read from Slurm's own parser (`slurm_conf_options[]` in
src/common/read_config.c) at that release's tag, and flags:

- an option the release does not know: a misspelling (with the closest real option), an
  option of another file (cgroup.conf, topology.conf), or one added in a later release;
- an option removed before the release (e.g. `FrontendName` in 25.05);
- an option the release still parses but ignores or refuses: a defunct option
  (`_defunct_option` handler) or one reported obsolete (`FastSchedule`, removed in 20.02,
  is still parsed and logged as "Ignoring obsolete FastSchedule=1 option");
- a plugin value that is not in the release (`SelectType=select/cons_res` from 23.11,
  `TopologyPlugin=topology/flat` before 25.05).

Option names are matched case-insensitively, as Slurm's parser does.

## Why is this bad?
slurmctld stops at an unrecognized key ("Parsing error at unrecognized key") or at a
missing plugin, and logs and ignores defunct options, so the cluster comes up without a
scheduler, or without the setting the reviewer approved, after an upgrade that looked
harmless.

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
    FastSchedule: 1
    SchedulerParamters: bf_continue
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
    SchedulerParameters: bf_continue
```

## References
- https://github.com/SchedMD/slurm/blob/slurm-23-11-11-1/src/common/read_config.c
  (`slurm_conf_options[]`, the FastSchedule and defunct-option messages); one table per
  release under archform/spec/data/slurm/, each recording its tag.
- https://slurm.schedmd.com/slurm.conf.html
- https://github.com/SchedMD/slurm/blob/master/RELEASE_NOTES (removed options and plugins)
"""

from __future__ import annotations

from collections.abc import Iterator

from archform.lint.context import RuleContext
from archform.lint.finding import Hit
from archform.lint.rule import NoOptions, rule
from archform.spec import slurm
from archform.spec.models.training import TrainingCluster


@rule(code="SCH001", name="unknown-slurm-option", severity="error")
def check(ctx: RuleContext, options: NoOptions) -> Iterator[Hit]:
    """slurm.conf overrides unknown to, removed in or ignored by the declared version."""
    for doc, tc in ctx.documents(TrainingCluster):
        sched = tc.scheduler
        if sched.kind != "slurm":
            continue
        version = sched.slurm_version
        for key, value in sched.slurm_conf.items():
            found = slurm.check_option(version, key, value)
            if found is not None:
                yield Hit(doc, ("scheduler", "slurm_conf", key), found.message, found.hint)
