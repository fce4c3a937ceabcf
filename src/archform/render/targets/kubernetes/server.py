"""The model-server container's engine-specific parts, read from its engine record.

Everything here comes from `archform.spec.engines`: the arguments and environment (with
every `Slot` filled), the metrics port, and the preStop drain. Shared code names no
engine; a new engine is a new record, not a new branch here.
"""

from __future__ import annotations

import re
from typing import Any, assert_never

from archform.render.targets.kubernetes import edge
from archform.render.targets.kubernetes.records import FleetView
from archform.spec.engines import engine
from archform.spec.engines.record import Engine, GaugeDrain, SleepDrain, Slot

# Where the init container puts the weights the server loads.
WEIGHTS_DIR = "/models/weights"


def engine_of(v: FleetView) -> Engine:
    """The fleet's serving engine record."""
    return engine(v.server.kind)


def metrics_port(v: FleetView) -> int:
    """The port the server serves /metrics on."""
    port = engine_of(v).metrics.port
    return v.server.port if port is None else port


def _slot(v: FleetView, slot: Slot) -> str:
    match slot:
        case Slot.WEIGHTS:
            return WEIGHTS_DIR
        case Slot.SERVED_NAME:
            return v.model.name
        case Slot.TENSOR_PARALLEL:
            return str(v.server.tp)
        case Slot.MAX_CONTEXT:
            return str(v.model.max_context)
        case Slot.PORT:
            return str(v.server.port)
        case Slot.METRICS_PORT:
            return str(metrics_port(v))
        case Slot.MAX_NUM_SEQS:
            return str(v.serving.max_num_seqs)
        case _:
            assert_never(slot)


def _fill(v: FleetView, template: str) -> str:
    return template.format_map({s.value: _slot(v, s) for s in Slot})


def server_args(v: FleetView) -> tuple[list[str], list[dict[str, Any]]]:
    """(container args, container env): the record's, then the edge's (key, Front Door)."""
    e = engine_of(v)
    args = [_fill(v, a) for a in e.args] + edge.server_args(v, e)
    env: list[dict[str, Any]] = [{"name": x.name, "value": _fill(v, x.value)} for x in e.env]
    return args, env + edge.server_env(v)


# The wait loop of a GaugeDrain: exits once the server's own gauges sum to 0 (or /metrics
# no longer answers), polling every second for at most the drain budget.
_GAUGE_WAIT = """\
import re, sys, time, urllib.request
deadline = time.monotonic() + {budget}
time.sleep({settle})
pattern = re.compile(r"^{gauges}(?:\\{{[^}}]*\\}})? (\\S+)$", re.M)
while time.monotonic() < deadline:
    try:
        text = urllib.request.urlopen("http://127.0.0.1:{port}{path}", timeout=2).read().decode()
    except OSError:
        sys.exit(0)
    if sum(float(x) for x in pattern.findall(text)) == 0:
        sys.exit(0)
    time.sleep(1)
"""


def _alternation(names: tuple[str, ...]) -> str:
    """A regular expression matching exactly `names`: shared prefix, then the rest."""
    if len(names) == 1:
        return re.escape(names[0])
    prefix = names[0]
    while not all(n.startswith(prefix) for n in names):
        prefix = prefix[:-1]
    rest = "|".join(re.escape(n[len(prefix) :]) for n in names)
    return f"{re.escape(prefix)}(?:{rest})"


def pre_stop(e: Engine, port: int, budget: int) -> list[str]:
    """preStop: wait for requests in flight to finish (a gauge drain), else sleep the budget."""
    drain = e.drain
    match drain:
        case GaugeDrain():
            script = _GAUGE_WAIT.format(
                budget=budget,
                settle=drain.settle_s,
                gauges=_alternation(drain.gauges),
                port=port if e.metrics.port is None else e.metrics.port,
                path=e.metrics.path,
            )
            return [*drain.interpreter, script]
        case SleepDrain():
            return ["sleep", str(budget)]
        case _:
            assert_never(drain)
