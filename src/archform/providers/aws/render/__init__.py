"""AWS: facts (facts.py) and the `pulumi-aws` training target (EC2 + EFA, FSx, EFS)."""

from archform.providers.aws.render.facts import FACTS
from archform.providers.aws.render.fleet import FLEET
from archform.providers.aws.render.training import TARGET

TARGETS = [TARGET]

__all__ = ["FACTS", "FLEET", "TARGETS"]
