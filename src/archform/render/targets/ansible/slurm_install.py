"""How the Slurm the configuration names gets onto the nodes: build inputs and plugin inventory.

Group variables for the slurm role, all derived from data:

- ``slurm_build_packages`` / ``slurm_build_runtime_packages`` / ``slurm_build_configure``: the
  configure dependencies archform installs (archform/spec/data/slurm_build.yaml), so the build
  has every plugin the configuration can name and configure fails instead of warning when a
  dependency is missing;
- ``slurm_build_nvml_dir``: the CUDA toolkit with NVML on the build host (images.yaml
  ``nvml``), or empty: gpu/nvml is built only where it exists;
- ``slurm_plugins``: every plugin the generated slurm.conf, cgroup.conf, gres.conf and
  slurmdbd.conf name (read from the same lines the templates write), each with the line that
  names it and the package that provides it on this install path. On the build path the role
  checks configure's verdict on each (config.log, before compiling) and each file after
  installing; `archform verify` (slurm-plugins) checks the same list statically.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from archform.render.targets.ansible.slurm_conf import SlurmContext
from archform.spec import slurm
from archform.spec.images import Image, load_images
from archform.spec.provider import spec_of
from archform.spec.slurm import plugins


@dataclass(frozen=True, slots=True)
class PluginNeed:
    """One entry of group_vars slurm_plugins."""

    plugin: str
    so: str
    file: str  # slurmdbd.conf plugins are checked where slurmdbd runs, the others everywhere
    conf: str
    package: str
    # build path: the automake conditionals configure must turn on (checked before compiling)
    conditionals: list[str]


def build_host_image(image: Image, provider: str) -> Image:
    """The image Slurm is compiled on: the first controller's.

    Cloud controllers boot the plain Ubuntu of the node image's release (no CUDA, so no
    NVML); on-prem hosts all run the cluster's image.
    """
    if not spec_of(provider).cloud:
        return image
    plain = {"jammy": "ubuntu-22.04", "noble": "ubuntu-24.04"}.get(image.codename or "")
    return load_images().images.get(plain or "", image)


def _package(named: plugins.Named, method: str, codename: str | None) -> str:
    if method == "distro":
        return (
            load_images().distro_plugins(codename).get(named.so, "no package of the distribution")
        )
    return plugins.provider_hint(named.plugin)


def needs(ctx: SlurmContext, image: Image, method: str) -> list[PluginNeed]:
    """The plugins the generated files name, for the role's check after installing."""
    version = slurm.parse_version(ctx.slurm_version)
    named = plugins.named_plugins(ctx.conf_files(), version, image.cgroup)
    return [
        PluginNeed(
            n.plugin,
            n.so,
            n.file,
            f"{n.file}: {n.line}",
            _package(n, method, image.codename),
            plugins.conditionals(n.plugin) if method == "build" else [],
        )
        for n in named
    ]


def group_vars(
    ctx: SlurmContext, image: Image, provider: str, method: str
) -> list[tuple[str, object]]:
    """slurm_build_* and slurm_plugins."""
    version = slurm.parse_version(ctx.slurm_version)
    nvml = build_host_image(image, provider).nvml or ""
    return [
        ("slurm_build_packages", plugins.build_packages()),
        ("slurm_build_runtime_packages", plugins.runtime_packages()),
        ("slurm_build_configure", plugins.configure_args(version, "{multiarch}", "")),
        # Added to configure only when the build host has the directory (a stat at build time).
        ("slurm_build_nvml_dir", nvml),
        ("slurm_build_nvml_configure", plugins.nvml_configure(nvml)),
        ("slurm_plugins", [asdict(n) for n in needs(ctx, image, method)]),
    ]
