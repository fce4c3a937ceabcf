"""Azure: facts (facts.py) and the `pulumi-azure` training target (scale sets + IB, AMLFS)."""

from archform.providers.azure.render.facts import FACTS
from archform.providers.azure.render.fleet import FLEET
from archform.providers.azure.render.training import TARGET

TARGETS = [TARGET]

__all__ = ["FACTS", "FLEET", "TARGETS"]
