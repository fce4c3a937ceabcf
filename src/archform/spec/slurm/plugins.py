"""Which plugins a Slurm configuration names, and which an install provides.

`named_plugins` reads configuration lines (slurm.conf, cgroup.conf, gres.conf, slurmdbd.conf)
and returns every plugin they make a daemon load, with the line that names it: plugin options
(``TaskPlugin=task/cgroup,task/affinity``), ``GresTypes`` (gres/gpu), ``CgroupPlugin``
(``autodetect`` is the node image's cgroup version, images.yaml ``cgroup``) and gres.conf
``AutoDetect`` (gpu/nvml, gpu/nvidia, ...; ``off`` loads gpu/generic). Only names that are
plugins of the release's source tree (data/slurm/<release>.json) count: ``MpiDefault=none``
or ``accounting_storage/none`` load nothing.

`build_provides` says which plugins a source build produces from a list of installed
packages (data/slurm_build.yaml: which configure dependency guards which plugin), and
`distro_plugins` which plugin files the distribution's slurm-wlm packages ship (images.yaml
``distro.<codename>.plugins``). The render side writes the named list into group_vars (the
slurm role asserts each file after installing); `archform verify` compares the two statically.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from archform.spec.datafile import load_data
from archform.spec.slurm.options import PLUGIN_OPTIONS
from archform.spec.slurm.releases import SlurmVersion, parse_version, release_data

# A configuration file as lines of (key, value) pairs, e.g. {"cgroup.conf": [[("CgroupPlugin",
# "autodetect")], ...]}.
ConfLines = Mapping[str, Sequence[Sequence[tuple[str, object]]]]
# gres.conf AutoDetect value -> the gpu plugin slurmd loads (src/interfaces/gpu.c,
# _get_gpu_type(): nvml, rsmi, oneapi, nrt, nvidia, else gpu/generic).
AUTODETECT = {
    "nvml": "gpu/nvml",
    "rsmi": "gpu/rsmi",
    "oneapi": "gpu/oneapi",
    "nrt": "gpu/nrt",
    "nvidia": "gpu/nvidia",
    "off": "gpu/generic",
}
# slurmdbd.conf options that name plugins (doc/man/man5/slurmdbd.conf.5).
DBD_OPTIONS = {"authtype": "auth", "storagetype": "accounting_storage"}


@dataclass(frozen=True, slots=True)
class Named:
    """One plugin a configuration makes a daemon load, and the line that names it."""

    plugin: str  # type/name, e.g. cgroup/v2
    file: str  # cgroup.conf
    line: str  # CgroupPlugin=autodetect

    @property
    def so(self) -> str:
        """The file `make install` puts in <prefix>/lib/slurm (cgroup_v2.so)."""
        return so_name(self.plugin)


@dataclass(frozen=True, slots=True)
class Dependency:
    """A configure dependency (data/slurm_build.yaml) and the plugins it guards."""

    name: str
    packages: tuple[str, ...]
    runtime: tuple[str, ...]
    configure: tuple[tuple[str, str | None], ...]  # (argument, first release or None)
    plugins: tuple[str, ...]
    conditionals: tuple[str, ...]  # automake conditionals guarding the plugins (config.log)
    archform: bool
    source: str


def so_name(plugin: str) -> str:
    """cgroup/v2 -> cgroup_v2.so."""
    kind, _, name = plugin.partition("/")
    return f"{kind}_{name}.so"


def plugin_of(so: str) -> str:
    """accounting_storage_mysql.so -> accounting_storage/mysql (longest known type first)."""
    stem = so.removesuffix(".so")
    for kind in sorted(_kinds(), key=len, reverse=True):
        if stem.startswith(kind + "_"):
            return f"{kind}/{stem[len(kind) + 1 :]}"
    kind, _, name = stem.partition("_")
    return f"{kind}/{name}"


@cache
def build_data() -> dict[str, Any]:
    """data/slurm_build.yaml, parsed."""
    data: dict[str, Any] = load_data("slurm_build.yaml")
    return data


@cache
def dependencies() -> tuple[Dependency, ...]:
    """Every configure dependency of the table, in file order."""
    out = []
    for name, raw in build_data()["dependencies"].items():
        configure = tuple(
            (str(c["arg"]), str(c["since"]) if c.get("since") else None)
            for c in raw.get("configure") or ()
        )
        out.append(
            Dependency(
                name=str(name),
                packages=tuple(str(p) for p in raw.get("packages") or ()),
                runtime=tuple(str(p) for p in raw.get("runtime") or ()),
                configure=configure,
                plugins=tuple(str(p) for p in raw.get("plugins") or ()),
                conditionals=tuple(str(c) for c in raw["conditionals"]),
                archform=bool(raw.get("archform", True)),
                source=str(raw["source"]),
            )
        )
    return tuple(out)


def _kinds() -> set[str]:
    kinds = {"gres"}
    for dep in dependencies():
        kinds |= {p.partition("/")[0] for p in dep.plugins}
    return kinds | set(PLUGIN_OPTIONS.values()) | {"cgroup", "gpu"}


def release_plugins(version: SlurmVersion) -> set[str]:
    """Every plugin in the release's source tree (type/name), gres/* included."""
    table: dict[str, list[str]] = release_data(version.release)["plugins"]
    found = {f"{kind}/{name}" for kind, names in table.items() for name in names}
    # src/plugins/gres/Makefile.am: SUBDIRS = common gpu nic mps shard (unconditional).
    return found | {"gres/gpu", "gres/mps", "gres/nic", "gres/shard"}


def guards(plugin: str) -> list[Dependency]:
    """The dependencies a plugin is built with (empty: built unconditionally on Linux)."""
    return [d for d in dependencies() if plugin in d.plugins]


def conditionals(plugin: str) -> list[str]:
    """The automake conditionals configure must turn on for the plugin to be built.

    Each is NAME_TRUE='' in config.log's output variables when on, NAME_TRUE='#' when off.
    """
    return [c for d in guards(plugin) for c in d.conditionals]


def _values(value: object) -> list[str]:
    return [v.strip() for v in str(value).split(",") if v.strip()]


def _plugin_option(
    kind: str, key: str, value: object, file: str, have: set[str]
) -> Iterable[Named]:
    for item in _values(value):
        prefix, _, name = item.partition("/")
        if key.lower() == "mpidefault" and not name:
            prefix, name = kind, item  # MpiDefault takes the bare name (pmix, pmi2, none)
        if prefix.replace("_", "").lower() != kind.replace("_", "") or not name:
            continue
        plugin = f"{kind}/{name}"
        if plugin in have:
            yield Named(plugin, file, f"{key}={value}")


def named_plugins(files: ConfLines, version: SlurmVersion, cgroup: str) -> list[Named]:
    """Every plugin the files make a daemon load, in file order, each once.

    `cgroup` is the cgroup version the node image boots with (v1 or v2): what
    ``CgroupPlugin=autodetect`` (the default) resolves to there.
    """
    have = release_plugins(version)
    out: list[Named] = []
    for file in ("slurm.conf", "cgroup.conf", "gres.conf", "slurmdbd.conf"):
        lines = files.get(file)
        if lines is None:
            continue
        if file == "cgroup.conf" and not any(
            k.lower() == "cgroupplugin" for ln in lines for k, _ in ln
        ):
            out.append(Named(f"cgroup/{cgroup}", file, "CgroupPlugin=autodetect (default)"))
        for line in lines:
            for key, value in line:
                low = key.lower()
                if file == "slurm.conf" and low in PLUGIN_OPTIONS:
                    out += _plugin_option(PLUGIN_OPTIONS[low], key, value, file, have)
                elif file == "slurm.conf" and low == "grestypes":
                    out += [Named(f"gres/{g}", file, f"{key}={value}") for g in _values(value)]
                elif file == "slurmdbd.conf" and low in DBD_OPTIONS:
                    out += _plugin_option(DBD_OPTIONS[low], key, value, file, have)
                elif file == "cgroup.conf" and low == "cgroupplugin":
                    text = str(value).lower()
                    name = cgroup if text == "autodetect" else text.removeprefix("cgroup/")
                    out.append(Named(f"cgroup/{name}", file, f"{key}={value}"))
                elif file == "gres.conf" and low == "autodetect":
                    gpu = AUTODETECT.get(str(value).lower())
                    if gpu is not None:
                        out.append(Named(gpu, file, f"{key}={value}"))
    seen: set[str] = set()
    unique = []
    for named in out:
        if named.plugin not in seen and named.plugin in have:
            seen.add(named.plugin)
            unique.append(named)
    return unique


def parse_conf(text: str) -> list[list[tuple[str, str]]]:
    """key=value lines of a Slurm config file (comments and Ansible expressions dropped)."""
    lines = []
    for raw in text.splitlines():
        body = raw.split("#", 1)[0].strip()
        if not body or "{{" in body:
            continue
        pairs = [tuple(w.split("=", 1)) for w in body.split() if "=" in w]
        if pairs:
            lines.append([(str(k), str(v)) for k, v in pairs])
    return lines


def configure_args(version: SlurmVersion, multiarch: str, nvml_dir: str) -> list[str]:
    """Configure arguments of the dependencies archform installs, for one release."""
    args = []
    for dep in dependencies():
        if not dep.archform or (dep.name == "nvml" and not nvml_dir):
            continue
        for arg, since in dep.configure:
            if since is None or parse_version(since) <= version:
                args.append(arg.replace("{multiarch}", multiarch).replace("{nvml_dir}", nvml_dir))
    return args


def nvml_configure(nvml_dir: str) -> str:
    """Configure's argument for gpu/nvml with the CUDA toolkit at nvml_dir ('' without one)."""
    if not nvml_dir:
        return ""
    dep = next(d for d in dependencies() if d.name == "nvml")
    return dep.configure[0][0].replace("{nvml_dir}", nvml_dir)


def build_packages(skip: Iterable[str] = ()) -> list[str]:
    """Build-host packages: the base set and every archform dependency's, in table order."""
    out = list(build_data()["base"]["packages"])
    for dep in dependencies():
        if dep.archform:
            out += [p for p in dep.packages if p not in out]
    return [p for p in out if p not in set(skip)]


def runtime_packages() -> list[str]:
    """Libraries every node needs for the plugins archform builds."""
    out: list[str] = []
    for dep in dependencies():
        if dep.archform:
            out += [p for p in dep.runtime if p not in out]
    return out


def build_provides(
    version: SlurmVersion,
    packages: Iterable[str],
    nvml: bool,
    configure: Iterable[str] | None = None,
) -> set[str]:
    """Plugins a build with these packages installed produces (nvml: NVML headers found).

    With `configure` (the arguments the build passes, {multiarch} unexpanded), a dependency
    whose enabling argument is missing (--with-pmix) builds nothing either.
    """
    installed = set(packages)
    given = None if configure is None else set(configure)

    def present(dep: Dependency) -> bool:
        if not dep.archform:
            return False
        if dep.name == "nvml":
            return nvml
        wanted = [arg for arg, since in dep.configure if since is None]
        if given is not None and any(arg not in given for arg in wanted):
            return False
        return set(dep.packages) <= installed

    return {p for p in release_plugins(version) if all(present(d) for d in guards(p))}


def missing_packages(plugin: str, packages: Iterable[str]) -> list[str]:
    """The build packages a plugin still lacks (its guards' packages not installed)."""
    installed = set(packages)
    return [p for d in guards(plugin) for p in d.packages if p not in installed]


def provider_hint(plugin: str) -> str:
    """What builds a plugin, for messages: 'libdbus-1-dev, linux-libc-dev' or a reason."""
    deps = guards(plugin)
    if not deps:
        return "built unconditionally"
    parts = []
    for dep in deps:
        if dep.name == "nvml":
            parts.append("the CUDA toolkit's NVML headers on the build host (--with-nvml)")
        elif not dep.archform:
            parts.append(f"{', '.join(dep.packages) or dep.name} (archform does not install it)")
        else:
            parts.append(", ".join(dep.packages))
    return "; ".join(parts)
