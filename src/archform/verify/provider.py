"""What verify asks of a provider: `ProviderVerify`, found by name in the registry.

A provider package's `verify.py` defines ``VERIFY`` (most subclass `VerifyBase`): the
placeholder outputs the Pulumi mock gives its resource types, its answers to the SDK's
invokes, and the schemas of the custom resources its fleets create. The mock and the
Kubernetes check merge every provider's and never name one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

from archform import providers

# A mock output: (resource name, its inputs) -> the provider-computed outputs.
MockOutputs = Callable[[str, dict[str, Any]], dict[str, Any]]
MOCK_CA = "bW9jay1jYQ=="  # base64("mock-ca"): the certificate authority of mocked clusters


@runtime_checkable
class ProviderVerify(Protocol):
    """The provider's part of verify's mocks and schemas."""

    @property
    def mock_outputs(self) -> Mapping[str, MockOutputs]:
        """Type token -> the outputs the provider computes that generated programs read."""
        ...

    @property
    def crd_schemas(self) -> Mapping[tuple[str, str], dict[str, Any]]:
        """(apiVersion, kind) -> JSON schema of a custom resource the provider's fleets use."""
        ...

    def mock_call(self, token: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """The answer to an invoke of the provider's SDK (None: not the provider's)."""
        ...


class VerifyBase:
    """No mocked outputs, invokes or custom resources."""

    mock_outputs: Mapping[str, MockOutputs] = MappingProxyType({})
    crd_schemas: Mapping[tuple[str, str], dict[str, Any]] = MappingProxyType({})

    def mock_call(self, token: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """Nothing answered."""
        return None


@cache
def verify_parts() -> tuple[ProviderVerify, ...]:
    """The verify part of every provider that has one, in list order."""
    out = []
    for name in providers.names():
        part = getattr(providers.part(name, "verify"), "VERIFY", None)
        if part is None:
            continue
        if not isinstance(part, ProviderVerify):
            raise TypeError(f"archform/providers/{name}/verify.py must define VERIFY")
        out.append(part)
    return tuple(out)


@cache
def mock_outputs() -> Mapping[str, MockOutputs]:
    """Every provider's mocked outputs by type token."""
    return MappingProxyType({k: v for p in verify_parts() for k, v in p.mock_outputs.items()})


@cache
def crd_schemas() -> Mapping[tuple[str, str], dict[str, Any]]:
    """Every provider's custom resource schemas."""
    return MappingProxyType({k: v for p in verify_parts() for k, v in p.crd_schemas.items()})


def mock_call(token: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """The first provider's answer to an invoke (None: no provider answers it)."""
    for part in verify_parts():
        answer = part.mock_call(token, args)
        if answer is not None:
            return answer
    return None
