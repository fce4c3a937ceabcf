"""On-prem blueprint facts: a site whose hosts and fabric the blueprint lists."""

from __future__ import annotations

from archform.spec.provider import ProviderSpec
from archform.spec.provider_base import SpecBase


class Onprem(SpecBase):
    """Hosts the user owns: Slurm through Ansible only, Lustre over LNet."""

    name = "onprem"
    label = "on-prem"
    article = "an"
    lnet = True


SPEC: ProviderSpec = Onprem()
