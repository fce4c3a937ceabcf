"""Every provider the blueprint contract allows has its package with its render facts."""

from __future__ import annotations

from typing import get_args

import pytest

from archform import providers
from archform.render.targets.common.clouds import cloud
from archform.spec.models.common import CloudProvider, Provider


def test_every_contract_provider_has_a_cloud_folder() -> None:
    assert providers.names() == get_args(Provider)
    for provider in get_args(Provider):
        assert cloud(provider).name == provider


def test_clouds_have_what_fleets_and_pulumi_projects_need() -> None:
    for provider in get_args(CloudProvider):
        facts = cloud(provider)
        assert facts.pulumi_sdk is not None
        assert facts.system_pool_instance is not None
        assert facts.cli_image is not None


def test_unknown_provider_is_refused() -> None:
    with pytest.raises(KeyError, match="no provider package 'oracle'"):
        cloud("oracle")


def test_each_capability_a_provider_declares_has_its_parts() -> None:
    """What a provider's spec part promises, its other parts provide (no crash at render)."""
    from archform.render.targets import provider_targets
    from archform.render.targets.kubernetes.provider import fleet_of
    from archform.spec.provider import spec_of

    target_names = {t.name for t in provider_targets()}
    for name in providers.names():
        spec = spec_of(name)
        if spec.fleets:
            assert fleet_of(name) is not None
            assert cloud(name).cli_image is not None
        if spec.registry_scheme is not None:
            assert cloud(name).object_url("b", "k").startswith(spec.registry_scheme + "://")
        if spec.cloud:
            assert f"pulumi-{name}" in target_names, f"{name}: a cloud needs its Pulumi target"
            assert spec.example_instance is not None
