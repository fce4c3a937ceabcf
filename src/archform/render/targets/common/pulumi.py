"""Shared pieces of the Pulumi training targets: settings, sizing, config keys, project files.

A generated project is data plus code: `settings.py` holds every value taken from the
blueprint (rendered with the `py` filter), and the program modules read it. The modules hold
no blueprint value: most are shipped code (real .py files in the provider's package,
archform/providers/<name>/templates/pulumi/, copied verbatim, checked by ruff and mypy), so a
reviewer reads the data in one place.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Callable
from dataclasses import dataclass

from archform.render.env import exists, provider_template, render, shipped, source
from archform.render.plain import Json, plain
from archform.render.target import Target
from archform.render.targets.common.clouds import cloud
from archform.render.targets.common.training_view import training_view
from archform.render.writer import GeneratedFile
from archform.spec import BlueprintSet, Document
from archform.spec.extensions import ExtensionFile, pulumi_package
from archform.spec.models.training import Storage, TrainingCluster

# Versions pinned in requirements.txt: the SDKs archform's tests run the programs with.
PULUMI_VERSION = "3.272.0"


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """One `pulumi config` key of a generated project."""

    name: str
    description: str
    default: str | None = None
    secret: bool = False

    @property
    def required(self) -> bool:
        """The user must set the key (it has no default)."""
        return self.default is None


# settings.py: UPPER_CASE name -> value (plain data or typed view records, see plain()).
Settings = dict[str, object]


def applies(doc: Document, provider: str) -> bool:
    """True for a TrainingCluster placed on `provider`."""
    model = doc.model
    return isinstance(model, TrainingCluster) and model.placement.provider == provider


SettingsOf = Callable[[TrainingCluster], tuple[Settings, list[ConfigKey], list[str]]]
# Settings that need the other documents of the set (name of the document, the set).
SetSettingsOf = Callable[[str, BlueprintSet], Settings]
# The provider config keys the README tells the user to set, from settings.py's values.
ProviderConfigOf = Callable[[Settings], list["ProviderConfig"]]


def make_target(
    provider: str,
    settings: SettingsOf,
    modules: list[str],
    provider_config: ProviderConfigOf,
    set_settings: SetSettingsOf | None = None,
) -> Target:
    """The Target for one provider: applies to its TrainingClusters, renders pulumi/."""

    def _render(doc: Document, blueprints: BlueprintSet) -> list[GeneratedFile]:
        cluster = doc.model
        assert isinstance(cluster, TrainingCluster)
        values, config, notes = settings(cluster)
        if set_settings is not None:
            values.update(set_settings(doc.name, blueprints))
        rel = cluster.extensions.pulumi
        team = pulumi_package(doc.file, rel) if rel else []
        keys = provider_config(values)
        return project_files(provider, cluster, values, config, modules, notes, keys, team)

    return Target(name=f"pulumi-{provider}", applies=lambda d: applies(d, provider), render=_render)


def round_up(value: float, step: int) -> int:
    """`value` rounded up to a multiple of `step` (at least one step)."""
    return max(step, math.ceil(value / step) * step)


def zone_of(cluster: TrainingCluster, fallback: str) -> str:
    """The single zone the cluster is built in (first listed, else `fallback`)."""
    return cluster.placement.zones[0] if cluster.placement.zones else fallback


def carve(cidr: str, count: int) -> list[str]:
    """Split `cidr` into `count` equal subnets (power of two above count), in order."""
    net = ipaddress.ip_network(cidr)
    bits = max(1, math.ceil(math.log2(max(count, 2))))
    assert net.prefixlen + bits <= 28, f"{cidr}: checked by spec.buildable"
    return [str(s) for s in net.subnets(prefixlen_diff=bits)][:count]


def host_address(subnet: str, index: int) -> str:
    """The `index`-th host address of a subnet (spec.buildable checked that it fits)."""
    net = ipaddress.ip_network(subnet)
    assert index < net.num_addresses - 2, f"{subnet} #{index}: checked by spec.buildable"
    return str(net.network_address + index)


def cluster_tags(cluster: TrainingCluster) -> dict[str, str]:
    """Tags on every resource: the cluster name, the blueprint's labels and owner, sorted."""
    view = training_view(cluster)
    tags = {"archform-cluster": cluster.name, **view.labels}
    if view.owner:
        tags["owner"] = view.owner
    return dict(sorted(tags.items()))


def base_settings(cluster: TrainingCluster) -> Settings:
    """Values every provider's settings.py carries (names from the shared training view)."""
    view = training_view(cluster)
    return {
        "CLUSTER": view.name,
        "REGION": view.region,
        "TAGS": cluster_tags(cluster),
        "SSH_CIDRS": sorted(view.ssh_cidrs),
        "CONTROLLER": view.controller,
        "LOGIN": view.login,
    }


def lustre_entries(cluster: TrainingCluster) -> list[Storage]:
    """Storage entries of kind lustre, in blueprint order."""
    return [s for s in cluster.storage if s.kind == "lustre"]


def nfs_entries(cluster: TrainingCluster) -> list[Storage]:
    """Storage entries of kind nfs, in blueprint order."""
    return [s for s in cluster.storage if s.kind == "nfs"]


@dataclass(frozen=True, slots=True)
class SettingRow:
    """One `NAME = value` line of settings.py."""

    key: str
    value: Json


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """A provider config key the README tells the user to set (value None: user supplies it)."""

    key: str
    value: str | None


@dataclass(frozen=True, slots=True)
class ProjectContext:
    """What every template of a training Pulumi project receives."""

    provider: str
    project: str
    cluster: str
    description: str
    settings: list[SettingRow]
    config: list[ConfigKey]
    pulumi_version: str
    sdk_package: str
    sdk_version: str
    modules: list[str]
    notes: list[str]
    provider_config: list[ProviderConfig]


def _settings_py(settings: Settings) -> list[SettingRow]:
    """Settings as (name, value) rows for settings.py; names are code-chosen identifiers."""
    rows = []
    for key, value in settings.items():
        if not key.isupper() or not key.replace("_", "").isalnum():
            raise ValueError(f"settings key {key!r} must be an UPPER_CASE identifier")
        rows.append(SettingRow(key, plain(value)))
    return rows


def module_source(provider: str, module: str, context: ProjectContext) -> str:
    """A program module's text: shipped code copied verbatim, else its template rendered.

    Shipped code is pulumi/<module> in the provider's templates/ (a real .py); a module whose
    text varies with the blueprint is a template, ``<module>.j2``.
    """
    name = provider_template(provider, f"pulumi/{module}")
    return source(name if exists(name) else f"{name}.j2", context)


def project_files(
    provider: str,
    cluster: TrainingCluster,
    settings: Settings,
    config: list[ConfigKey],
    modules: list[str],
    notes: list[str],
    provider_config: list[ProviderConfig],
    extensions: list[ExtensionFile] | None = None,
) -> list[GeneratedFile]:
    """Render a whole project: Pulumi.yaml, settings.py, program modules, requirements, README.

    `extensions` (the team's package, blueprint `extensions.pulumi`) is copied to
    pulumi/extensions/ and called last by __main__.py.
    """
    sdk = cloud(provider).pulumi_sdk
    assert sdk is not None, f"{provider} has no Pulumi SDK"
    package, version = sdk
    settings = {
        **settings,
        "CONFIG_DEFAULTS": {c.name: c.default for c in config if c.default is not None},
        # __main__.py calls the team's package (pulumi/extensions/) last when there is one.
        "EXTENSIONS": bool(extensions),
    }
    context = ProjectContext(
        provider=provider,
        project=f"{cluster.name}-{provider}",
        cluster=cluster.name,
        description=cluster.description or f"archform training cluster {cluster.name}",
        settings=_settings_py(settings),
        config=list(config),
        pulumi_version=PULUMI_VERSION,
        sdk_package=package,
        sdk_version=version,
        modules=modules,
        notes=notes,
        provider_config=provider_config,
    )
    files = [
        GeneratedFile.text("pulumi/Pulumi.yaml", render("pulumi/common/Pulumi.yaml.j2", context)),
        GeneratedFile.text(
            "pulumi/requirements.txt", render("pulumi/common/requirements.txt.j2", context)
        ),
        GeneratedFile.text("pulumi/README.md", render("pulumi/common/README.md.j2", context)),
        GeneratedFile.text("pulumi/settings.py", render("pulumi/common/settings.py.j2", context)),
        GeneratedFile.text("pulumi/inventory.py", shipped("pulumi/common/inventory.py")),
    ]
    for module in modules:
        files.append(
            GeneratedFile.text(f"pulumi/{module}", module_source(provider, module, context))
        )
    files += [GeneratedFile(f"pulumi/extensions/{f.path}", f.content) for f in extensions or []]
    return files
