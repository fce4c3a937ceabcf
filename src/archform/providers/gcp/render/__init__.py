"""GCP: facts (facts.py) and the `pulumi-gcp` training target (GPUDirect, Lustre, Filestore)."""

from archform.providers.gcp.render.facts import FACTS
from archform.providers.gcp.render.fleet import FLEET
from archform.providers.gcp.render.training import TARGET

TARGETS = [TARGET]

__all__ = ["FACTS", "FLEET", "TARGETS"]
