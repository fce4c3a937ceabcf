"""Node images as data (data/images.yaml): what each image ships, and choosing one per blueprint.

A training cluster's nodes boot one image. The image decides which pieces the playbooks must add
(driver, fabric stack, Lustre client, Slurm) and which are already there and only checked.
`choose_image` picks the image a blueprint names, or the first default of its provider that
provides the blueprint's fabric stack and Lustre client; `image_problems` turns a combination
nothing provides into a located validation error.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data
from archform.spec.errors import SpecProblem
from archform.spec.paths import Loc, format_path
from archform.spec.slurm.releases import default_version
from archform.spec.source import RawDocument


@dataclass(frozen=True, slots=True)
class Repository:
    """An apt repository a role can configure, and the package patterns it provides."""

    name: str
    uri: str
    suites: dict[str, str]
    key: str
    provides: tuple[str, ...]
    source: str

    def suite(self, codename: str) -> str | None:
        """The suite for an Ubuntu codename, or None when the repository has none for it."""
        return self.suites.get(codename, self.suites.get("*"))


@dataclass(frozen=True, slots=True)
class Image:
    """One node image and what it ships."""

    id: str
    title: str
    providers: dict[str, str | None]
    codename: str | None
    ships: dict[str, str | None]
    preinstalled: tuple[str, ...]
    local_nvme: str | None
    local_nvme_by_image: bool
    paths: dict[str, str]  # path the image ships -> the source that says so
    fabrics: dict[str, str]
    lustre: dict[str, str]
    cgroup: str
    nvml: str | None
    archform_roles: bool
    why_not: str
    source: str

    def fabric_method(self, kind: str) -> str:
        """How this image gets the host stack of a fabric kind ('unavailable' if unknown)."""
        return self.fabrics.get(kind, "unavailable")

    def lustre_method(self, provider: str) -> str:
        """How this image gets the Lustre client on a provider."""
        return self.lustre.get(provider, "unavailable")

    def has(self, component: str) -> bool:
        """True when the image ships the component preinstalled."""
        return self.ships.get(component) is not None

    def ships_package(self, name: str) -> bool:
        """True when a package name matches one of the image's preinstalled patterns."""
        return any(fnmatch.fnmatchcase(name, p) for p in self.preinstalled)


@dataclass(frozen=True, slots=True)
class ImageTable:
    """The whole table: images, repositories, distro packages, provider defaults."""

    components: tuple[str, ...]  # what an image may ship (images.yaml `components`)
    images: dict[str, Image]
    repositories: dict[str, Repository]
    distro: dict[str, dict[str, Any]]
    defaults: dict[str, tuple[str, ...]]

    def distro_slurm(self, codename: str | None) -> str | None:
        """The Slurm version the Ubuntu archive ships for a codename."""
        if codename is None or codename not in self.distro:
            return None
        value = self.distro[codename].get("slurm")
        return str(value) if value is not None else None

    def distro_plugins(self, codename: str | None) -> dict[str, str]:
        """Slurm plugin file (cgroup_v2.so) -> the distribution package that ships it."""
        if codename is None or codename not in self.distro:
            return {}
        table = self.distro[codename].get("plugins") or {}
        return {str(so): str(package) for package, files in table.items() for so in files}

    def distro_depends(self, codename: str | None) -> dict[str, tuple[str, ...]]:
        """Slurm package -> the plugin packages apt installs with it (its Depends)."""
        if codename is None or codename not in self.distro:
            return {}
        table = self.distro[codename].get("depends") or {}
        return {str(k): tuple(str(p) for p in v) for k, v in table.items()}

    def distro_packages(self, codename: str | None) -> tuple[str, ...]:
        """Package names (patterns) of the Ubuntu archive archform's roles use."""
        if codename is None or codename not in self.distro:
            return ()
        return tuple(str(p) for p in self.distro[codename].get("packages") or ())


def _image(key: str, raw: dict[str, Any], components: tuple[str, ...]) -> Image:
    given = raw["ships"]
    ships = {c: (str(given[c]) if given.get(c) is not None else None) for c in components}
    return Image(
        id=key,
        title=str(raw["title"]),
        providers={str(k): (None if v is None else str(v)) for k, v in raw["providers"].items()},
        codename=raw.get("codename"),
        ships=ships,
        preinstalled=tuple(str(p) for p in raw.get("preinstalled") or ()),
        local_nvme=raw.get("local_nvme"),
        local_nvme_by_image=bool(raw.get("local_nvme_by_image", False)),
        paths={str(k): str(v) for k, v in (raw.get("paths") or {}).items()},
        fabrics={str(k): str(v) for k, v in (raw.get("fabrics") or {}).items()},
        lustre={str(k): str(v) for k, v in (raw.get("lustre") or {}).items()},
        cgroup=str(raw["cgroup"]),
        nvml=None if raw.get("nvml") is None else str(raw["nvml"]),
        archform_roles=bool(raw.get("archform_roles", True)),
        why_not=str(raw.get("why_not", "")),
        source=str(raw["source"]),
    )


def _repository(key: str, raw: dict[str, Any]) -> Repository:
    suites = {str(k): str(v) for k, v in (raw.get("suites") or {}).items()}
    if "suite" in raw:
        suites["*"] = str(raw["suite"])
    return Repository(
        name=key,
        uri=str(raw["uri"]),
        suites=suites,
        key=str(raw.get("key", "")),
        provides=tuple(str(p) for p in raw["provides"]),
        source=str(raw["source"]),
    )


def images_data() -> dict[str, Any]:
    """The raw table from archform/spec/data/images.yaml."""
    data: dict[str, Any] = load_data("images.yaml")
    return data


@cache
def load_images() -> ImageTable:
    """Load (once) the image table."""
    data = images_data()
    components = tuple(str(c) for c in data["components"])
    return ImageTable(
        components=components,
        images={k: _image(k, v, components) for k, v in sorted(data["images"].items())},
        repositories={k: _repository(k, v) for k, v in sorted(data["repositories"].items())},
        distro={str(k): dict(v) for k, v in data["distro"].items()},
        defaults={str(k): tuple(v) for k, v in data["defaults"].items()},
    )


@dataclass(frozen=True, slots=True)
class Needs:
    """What a training blueprint needs from its node image."""

    provider: str
    fabric: str
    lustre: bool
    slurm: str | None


def shortfalls(image: Image, needs: Needs) -> list[tuple[str, str]]:
    """(what, why) pairs the image cannot provide for the needs; empty when it fits."""
    out: list[tuple[str, str]] = []
    if needs.provider not in image.providers:
        where = ", ".join(sorted(image.providers))
        out.append(("provider", f"image {image.id!r} exists on {where}, not on {needs.provider}"))
        return out
    if not image.archform_roles:
        why = f"image {image.id!r} cannot be configured by archform: {image.why_not}"
        out.append(("image", why))
        return out
    if image.fabric_method(needs.fabric) == "unavailable":
        why = f"image {image.id!r} has no source for the {needs.fabric} host stack"
        out.append(("fabric", why))
    if needs.lustre and image.lustre_method(needs.provider) == "unavailable":
        out.append(
            ("lustre", f"no Lustre client is published for image {image.id!r} on {needs.provider}")
        )
    return out


def slurm_install_method(image: Image, version: str) -> str:
    """'distro' when the image's Ubuntu archive ships the Slurm major.minor, else 'build'."""
    shipped = load_images().distro_slurm(image.codename)
    if shipped is None or shipped.split(".")[:2] != version.split(".")[:2]:
        return "build"
    return "distro" if len(version.split(".")) < 3 or shipped == version else "build"


def choose_image(named: str | None, needs: Needs) -> Image | None:
    """The named image when it fits, else the first provider default that fits (None: none)."""
    table = load_images()
    if named is not None:
        image = table.images.get(named)
        return image if image is not None and not shortfalls(image, needs) else None
    for key in table.defaults.get(needs.provider, ()):
        if not shortfalls(table.images[key], needs):
            return table.images[key]
    return None


def needs_of_data(data: dict[str, Any]) -> Needs | None:
    """What a TrainingCluster's raw data needs from its image (None: too malformed to say).

    The Slurm version is the blueprint's, else the default release (spec.slurm), so
    validation and the model's default image choose with the same needs.
    """
    placement = data.get("placement")
    fabric = data.get("fabric")
    if not isinstance(placement, dict) or not isinstance(fabric, dict):
        return None
    provider, kind = placement.get("provider"), fabric.get("kind")
    if not isinstance(provider, str) or not isinstance(kind, str):
        return None
    storage = data.get("storage")
    entries = storage if isinstance(storage, list) else []  # a wrong shape: the model says so
    lustre = any(isinstance(s, dict) and s.get("kind") == "lustre" for s in entries)
    scheduler = data.get("scheduler") or {}
    version = scheduler.get("version") if isinstance(scheduler, dict) else None
    return Needs(provider, kind, lustre, version if isinstance(version, str) else default_version())


def default_image(data: dict[str, Any]) -> str | None:
    """The image a TrainingCluster gets when it names none: the one place it is chosen.

    The model fills ``compute.image`` with it, so resolved-blueprint.yaml shows it and the
    generators read it from there; None when nothing fits (image_problems says why).
    """
    needs = needs_of_data(data)
    chosen = choose_image(None, needs) if needs is not None else None
    return chosen.id if chosen is not None else None


def _first_lustre(data: dict[str, Any]) -> Loc:
    for i, s in enumerate(data.get("storage") or []):
        if isinstance(s, dict) and s.get("kind") == "lustre":
            return ("storage", i, "kind")
    return ("storage",)


def image_problems(doc: RawDocument) -> list[SpecProblem]:
    """Validation errors for a TrainingCluster whose image cannot provide what it needs."""
    data = doc.data
    if not isinstance(data, dict) or data.get("kind") != "TrainingCluster":
        return []
    needs = needs_of_data(data)
    if needs is None:
        return []
    compute = data.get("compute") if isinstance(data.get("compute"), dict) else {}
    named = compute.get("image") if isinstance(compute, dict) else None
    table = load_images()
    if isinstance(named, str):
        loc: Loc = ("compute", "image")
        image = table.images.get(named)
        if image is None:
            known = ", ".join(k for k, i in table.images.items() if needs.provider in i.providers)
            return [_problem(doc, loc, f"unknown node image {named!r}", f"use one of {known}")]
        gaps = shortfalls(image, needs)
        if not gaps:
            return []
        what, why = gaps[0]
        fits = [k for k, i in table.images.items() if not shortfalls(i, needs)]
        hint = f"use {' or '.join(fits)}" if fits else "no image archform knows provides this"
        if what == "lustre":
            loc = _first_lustre(data)
        elif what == "fabric":
            loc = ("compute", "image")
        return [_problem(doc, loc, why, hint)]
    if choose_image(None, needs) is not None:
        return []
    loc = _first_lustre(data) if needs.lustre else ("fabric", "kind")
    tried = ", ".join(table.defaults.get(needs.provider, ()))
    what = f"{needs.fabric} fabric" + (" and a Lustre client" if needs.lustre else "")
    return [
        _problem(
            doc,
            loc if _located(doc, loc) else ("placement", "provider"),
            f"no node image provides the {what} on {needs.provider} (tried {tried})",
            "change the fabric or storage kind, or name an image with compute.image",
        )
    ]


def _located(doc: RawDocument, loc: Loc) -> bool:
    node: Any = doc.data
    for part in loc:
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if not (in_dict or in_list):
            return False
        node = node[part]
    return True


def _problem(doc: RawDocument, loc: Loc, message: str, hint: str) -> SpecProblem:
    pos = doc.source.locate(loc, prefer="value")
    path = format_path(loc)
    return SpecProblem(doc.file, pos.line, pos.column, f"{path}: {message}", hint, path)
