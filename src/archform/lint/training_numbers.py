"""The training step model's figures as lint findings state them (NET001, NET002, NET008, TRN002).

Every number comes from archform.estimate.training_plan, the model `archform estimate` runs:
the same blueprint gives the same tokens/s per GPU and exposed data-parallel seconds in
`archform estimate --format json` (rounded as there: tokens/s to 0.1, seconds to 0.001).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported on first use: lint's start-up stays light
    from archform.estimate.training_plan import FabricWhatIf, TrainingEstimate
    from archform.spec.models.training import TrainingCluster


def versus(
    cluster: TrainingCluster, gbps_per_node: int, label: str, kind: str | None = None
) -> str:
    """'; the step model ...' comparing the blueprint's fabric with `label`, or ''."""
    from archform.estimate.training_plan import fabric_what_if

    w = fabric_what_if(cluster, gbps_per_node, kind)
    return "" if w is None else "; " + sentence(w, label)


def figures(e: TrainingEstimate) -> tuple[float, float, float]:
    """(tokens/s per GPU, step s, exposed data-parallel s) rounded as the estimate's JSON."""
    step = e.step
    return (
        round(step.tokens_per_s_per_gpu, 1),
        round(step.step_s, 3),
        round(step.dp_exposed_s, 3),
    )


def compare(
    slow: TrainingEstimate, fast: TrainingEstimate, slow_label: str, fast_label: str
) -> str:
    """'N tokens/s per GPU <slow_label> vs M <fast_label> (...)'."""
    tps_slow, step_slow, exp_slow = figures(slow)
    tps_fast, step_fast, exp_fast = figures(fast)
    lost = 1 - tps_slow / tps_fast if tps_fast else 0.0
    return (
        f"{tps_slow:,.0f} tokens/s per GPU {slow_label} vs {tps_fast:,.0f} {fast_label} "
        f"({lost:.0%} fewer, step {step_slow:.2f} s vs {step_fast:.2f} s, exposed "
        f"data-parallel sync {exp_slow:.2f} s vs {exp_fast:.2f} s)"
    )


def sentence(w: FabricWhatIf, label: str) -> str:
    """The comparison of the blueprint's fabric with `label` in words."""
    text = "archform estimate's step model gives " + compare(w.here, w.there, "here", f"on {label}")
    return text + (f" [{w.assumed}]" if w.assumed else "")
