"""What archform knows about one serving engine, as one typed record (`Engine`).

A record holds everything the generated fleet needs from its model server: the default
image, the container arguments and environment, the ports, the readiness and liveness
paths, the Prometheus metrics the autoscaler and the drain read, and how the server is
drained before SIGTERM; each group of facts carries the source it was read from. The fleet
renderer reads nothing else about an engine, so adding an engine is adding one record.

Arguments and environment values are templates over a closed set of slots (`Slot`): the
renderer fills every slot with a `match` that mypy checks is exhaustive, and a record that
names a slot that does not exist is refused when it is built.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal


class Slot(StrEnum):
    """A value the renderer puts into an engine's arguments or environment (`{slot}`)."""

    WEIGHTS = "weights"  # the folder the model's weights are in (/models/weights)
    SERVED_NAME = "served_name"  # the model name clients send (model.name)
    TENSOR_PARALLEL = "tensor_parallel"  # GPUs per replica (server.tensor_parallel)
    MAX_CONTEXT = "max_context"  # model.max_context_tokens
    PORT = "port"  # the HTTP port (server.port)
    METRICS_PORT = "metrics_port"  # the port /metrics is served on
    MAX_NUM_SEQS = "max_num_seqs"  # requests one replica runs at once (the estimate's)


# What each record must source: the groups of facts below.
FactGroup = Literal["image", "args", "env", "ports", "probes", "metrics", "drain", "api_key"]
FACT_GROUPS: tuple[FactGroup, ...] = (
    "image",
    "args",
    "env",
    "ports",
    "probes",
    "metrics",
    "drain",
    "api_key",
)


@dataclass(frozen=True, slots=True)
class Source:
    """Where a group of facts was read: a public URL and the release or commit it holds for."""

    url: str
    version: str


@dataclass(frozen=True, slots=True)
class Env:
    """One environment variable; `value` is a template over `Slot`s."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class Metrics:
    """The server's Prometheus metrics the autoscaler queries, and where they are served.

    `queue`: requests waiting; `running`: requests being served, set only where the server
    also caps them at `{max_num_seqs}` (its arguments say so), so that in flight = running +
    waiting and a full batch is part of the threshold; `kv`: the KV-cache usage gauge, or
    several names of it across the server's releases (PromQL `a or b`); `ok`: the counter of
    successful requests. `port` is None when /metrics is on the HTTP port.
    """

    queue: str
    kv: tuple[str, ...]
    ok: str
    running: str | None = None
    port: int | None = None
    path: str = "/metrics"


@dataclass(frozen=True, slots=True)
class GaugeDrain:
    """preStop waits until these gauges of the server's own /metrics sum to 0.

    For servers whose SIGTERM aborts requests in flight: `interpreter` runs the wait loop
    (the image must ship it), polling every second after `settle_s`, for at most the drain
    budget.
    """

    gauges: tuple[str, ...]
    interpreter: tuple[str, ...] = ("python3", "-c")
    settle_s: int = 5


@dataclass(frozen=True, slots=True)
class SleepDrain:
    """preStop sleeps the drain budget: the pod leaves the endpoints, then gets SIGTERM."""


Drain = GaugeDrain | SleepDrain


@dataclass(frozen=True, slots=True)
class ApiKey:
    """The server checks an API key it reads from `env`; `checkov_reason` says why env.

    `ready_needs_key`: the ready path itself requires the key, so probes and load balancers
    (which send none) use the liveness path instead.
    """

    env: str
    checkov_reason: str
    ready_needs_key: bool = True


@dataclass(frozen=True, slots=True)
class Engine:
    """One serving engine: everything a generated Deployment and autoscaler take from it."""

    kind: str
    image: str | None  # None: no default (the blueprint must give server.image)
    args: tuple[str, ...]
    env: tuple[Env, ...]
    ready_path: str  # answers 2xx once the model is loaded and served
    live_path: str  # answers 2xx while the process is healthy
    metrics: Metrics
    drain: Drain
    sources: dict[FactGroup, Source]
    api_key: ApiKey | None = None
    # The model-folder layout the engine loads (spec/data/checkpoints.yaml `formats`), which
    # `archform promote` checks before publishing; None where archform has none on record.
    checkpoint: str | None = None
    # The argument that loads an extra ASGI middleware module by import path (archform's
    # Front Door header check on Azure); None where the server has no such hook.
    middleware_arg: str | None = None
    image_note: str = ""  # why the default image is the one it is, or why there is none
    notes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for template in (*self.args, *(e.value for e in self.env)):
            for _, name, spec, conv in string.Formatter().parse(template):
                if name is not None and (name not in Slot.__members__.values() or spec or conv):
                    raise ValueError(
                        f"engine {self.kind}: {{{name}}} in {template!r} is not a slot "
                        f"(one of {', '.join(s.value for s in Slot)})"
                    )
        missing = [g for g in FACT_GROUPS if g not in self.sources]
        if missing:
            raise ValueError(f"engine {self.kind}: no source for {', '.join(missing)}")
        if self.metrics.running is not None and not any(
            f"{{{Slot.MAX_NUM_SEQS.value}}}" in a for a in self.args
        ):
            raise ValueError(
                f"engine {self.kind}: a running gauge counts towards the queue only where "
                "the arguments cap running requests at {max_num_seqs}"
            )

    @property
    def metrics_port_is_separate(self) -> bool:
        """/metrics is served on its own port (a second container port)."""
        return self.metrics.port is not None
