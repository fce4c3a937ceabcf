"""Built-in targets. Each module exposes TARGET; add new ones to BUILTIN."""

from __future__ import annotations

from archform.render.target import Target
from archform.render.targets import (
    ansible,
    fleet,
    platform,
    policy_pack,
    pulumi_aws,
    pulumi_azure,
    pulumi_gcp,
)

BUILTIN: list[Target] = [
    ansible.TARGET,
    fleet.TARGET,
    platform.TARGET,
    policy_pack.TARGET,
    pulumi_aws.TARGET,
    pulumi_azure.TARGET,
    pulumi_gcp.TARGET,
]
