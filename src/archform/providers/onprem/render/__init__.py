"""On-prem: no Pulumi target (the ansible target alone); the facts the shared targets read."""

from archform.providers.onprem.render.facts import FACTS

TARGETS: list[object] = []

__all__ = ["FACTS", "TARGETS"]
