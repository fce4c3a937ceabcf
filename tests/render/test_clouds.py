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
