"""Waiting for cloud IAM grants to take effect, spliced into each fleet's __main__.py.

Pulumi serializes a dynamic provider by value only when its class is defined in __main__, so
the fleet programs (templates/pulumi/fleet/<cloud>.py.j2) carry the lines below the fragment
marker verbatim; the lines above it let ruff and mypy check this file on its own.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi.dynamic

# --- archform fragment: the fleet programs carry what follows ---
# --- waiting for grants to take effect ---------------------------------------------------
# Cloud IAM is eventually consistent: a role assignment or identity association exists as
# soon as its API call returns, but is honoured only later (README.md, "How long a deploy
# waits"). Propagation is a dynamic resource that waits once, after everything in `after`
# exists, and again only when `after` changes; what needs the grant depends on it. It is
# defined here, in __main__, so Pulumi serializes it by value for its dynamic provider.


class _PropagationProvider(pulumi.dynamic.ResourceProvider):
    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        import time

        time.sleep(float(props["seconds"]))
        return pulumi.dynamic.CreateResult(id_=str(props["name"]), outs=dict(props))

    def diff(
        self, _id: str, olds: dict[str, Any], news: dict[str, Any]
    ) -> pulumi.dynamic.DiffResult:
        replace = [k for k in ("after", "seconds") if olds.get(k) != news.get(k)]
        return pulumi.dynamic.DiffResult(changes=bool(replace), replaces=replace)


class Propagation(pulumi.dynamic.Resource):
    """Wait `seconds` after `grants` were created (`reason` says why); depend on this.

    Registered as `<name>-propagation`.
    """

    def __init__(self, name: str, seconds: int, grants: list[pulumi.Resource], reason: str) -> None:
        after = [g.id for g in grants if isinstance(g, pulumi.CustomResource)]
        super().__init__(
            _PropagationProvider(),
            f"{name}-propagation",
            {"name": name, "seconds": seconds, "after": after, "reason": reason},
            pulumi.ResourceOptions(depends_on=grants),
        )
