"""SkyPilot task YAML read as a TrainingCluster (see docs/peers/skypilot.md).

Facts from SkyPilot's task schema (sky/utils/schemas.py) and its YAML reference
(https://docs.skypilot.co/en/latest/reference/yaml-spec.html): a task's top-level keys, the
`resources` keys, `accelerators` as `NAME:COUNT`, `NAME` (one) or `{NAME: COUNT}`,
`any_of` / `ordered` candidate lists, `num_nodes` (default 1), and `file_mounts` whose
value is a bucket URI or a mapping with `source`/`store`/`mode`/`name`.
"""

from __future__ import annotations

import re
from typing import Any

from archform.spec.catalog import load_catalog
from archform.spec.paths import Loc
from archform.spec.peers.mapper import Mapper
from archform.spec.provider import names as provider_names
from archform.spec.provider import spec_of

NAME = "skypilot"
TITLE = "SkyPilot task YAML"
DOCS = "https://docs.skypilot.co/en/latest/reference/yaml-spec.html"

# The keys SkyPilot's own JSON Schemas allow (additionalProperties: False), as of
# skypilot-org/skypilot@00052dfe sky/utils/schemas.py: get_task_schema (task), get_resources_schema
# (resources, also each any_of / ordered entry) and get_storage_schema (a file_mounts store).
# Keys with a leading underscore there are internal ("should not be specified in the task
# config") and are not accepted here. spot_recovery, the older name of job_recovery, is kept
# so files written for earlier releases still read.
TOP_KEYS = (
    "name",
    "workdir",
    "event_callback",
    "num_nodes",
    "resources",
    "file_mounts",
    "service",
    "pool",
    "setup",
    "run",
    "envs",
    "secrets",
    "managed_secrets",
    "inputs",
    "outputs",
    "file_mounts_mapping",
    "config",
    "volumes",
    "volume_mounts",
    "api_server_access",
)
RESOURCE_KEYS = (
    "cloud",
    "region",
    "zone",
    "infra",
    "cpus",
    "memory",
    "accelerators",
    "instance_type",
    "use_spot",
    "job_recovery",
    "spot_recovery",
    "volumes",
    "disk_size",
    "ephemeral_storage",
    "disk_tier",
    "network_tier",
    "local_disk",
    "max_hourly_cost",
    "ports",
    "labels",
    "accelerator_args",
    "image_id",
    "autostop",
    "priority",
    "priority_class",
    "any_of",
    "ordered",
)
MOUNT_KEYS = ("name", "source", "store", "persistent", "mode", "mount_options", "type", "config")
URI = re.compile(r"^(s3|gs|r2|cos|oci|https)://")
_TOP = re.compile(r"^(resources|num_nodes|file_mounts|run|setup):", re.MULTILINE)
_KIND = re.compile(r"^kind:", re.MULTILINE)
REASONS = {
    "run": "the job's commands are not part of the architecture; not checked",
    "setup": "setup commands are not part of the architecture; not checked",
    "envs": "environment variables are not checked",
    "secrets": "secrets are not part of the blueprint",
    "workdir": "the synced working directory is not part of the blueprint",
}


def clouds() -> dict[str, str]:
    """SkyPilot's cloud name -> archform provider, for the providers that declare one."""
    return {c: n for n in provider_names() if (c := spec_of(n).skypilot_cloud) is not None}


def cloud_hint() -> str:
    """'set resources.cloud (or infra) to aws, gcp or azure'."""
    names = list(clouds())
    listed = ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)
    return f"set resources.cloud (or infra) to {listed}"


def fixed_instance(provider: str, model: str) -> tuple[str, str] | None:
    """(GPU model, instance type) SkyPilot's catalog of `provider` ties `model` to, or None."""
    return spec_of(provider).skypilot_accelerators.get(model)


def sniff(text: str) -> bool:
    """Line-based: a top-level `resources:`/`num_nodes:`/`run:`... and no `kind:`."""
    return bool(_TOP.search(text)) and not _KIND.search(text)


def claims(data: object) -> bool:
    """A mapping with SkyPilot's task keys (`resources`, `run`, ...) and no ParallelCluster's."""
    if not isinstance(data, dict) or "HeadNode" in data or "Scheduling" in data:
        return False
    if "service" in data:
        return False  # a SkyServe service (archform.spec.peers.skyserve)
    return any(key in data for key in ("resources", "num_nodes", "file_mounts", "run", "setup"))


def read(m: Mapper) -> None:
    """Map a SkyPilot task onto a TrainingCluster."""
    m.keys((), TOP_KEYS, what="Invalid task YAML: additional property not allowed.")
    res: Loc = ("resources",)
    m.keys(res, RESOURCE_KEYS, what="Invalid resources YAML: additional property not allowed.")
    chosen = _candidate(m, res)
    if chosen != res:
        m.keys(chosen, RESOURCE_KEYS, what="Invalid resources YAML: additional property.")
    if m.problems:
        return
    name = m.get(("name",))
    if isinstance(name, str) and re.fullmatch(r"[a-z][a-z0-9-]{0,38}", name):
        m.name = name
    provider = _placement(m, res, chosen)
    if provider is None:
        return
    nodes = m.expect(("num_nodes",), int, "an integer")
    m.put(("compute", "nodes"), nodes or 1, ("num_nodes",) if nodes else res)
    _instance(m, provider, res, chosen)
    if m.problems:
        return
    spot = _value(m, res, chosen, "use_spot")
    if spot is not None and spot[1] is True:
        m.put(("compute", "purchase"), "spot", spot[0])
    _fabric(m, res, chosen)
    _mounts(m)
    m.rest((), ("name", "num_nodes", "resources", "file_mounts"), REASONS)
    done = ("infra", "cloud", "region", "zone", "accelerators", "instance_type", "use_spot")
    m.rest(chosen, (*done, "network_tier", "any_of", "ordered"))


def _candidate(m: Mapper, res: Loc) -> Loc:
    """The resources archform lints: the top ones, or the first `ordered`/`any_of` entry."""
    for key in ("ordered", "any_of"):
        options = m.get((*res, key))
        if isinstance(options, list) and options:
            for index in range(1, len(options)):
                m.unmapped((*res, key, index), "a fallback candidate; archform lints the first")
            return (*res, key, 0)
    return res


def _value(m: Mapper, res: Loc, chosen: Loc, key: str) -> tuple[Loc, Any] | None:
    for base in (chosen, res):
        if m.has((*base, key)):
            return (*base, key), m.get((*base, key))
    return None


def _placement(m: Mapper, res: Loc, chosen: Loc) -> str | None:
    infra = _value(m, res, chosen, "infra")
    cloud = _value(m, res, chosen, "cloud")
    parts: list[str] = []
    if infra is not None and isinstance(infra[1], str):
        parts = infra[1].split("/")
    where = infra[0] if infra is not None else cloud[0] if cloud is not None else res
    name = (parts[0] if parts else str(cloud[1]) if cloud is not None else "").lower()
    known = clouds()
    if name not in known:
        hint = cloud_hint()
        if not name:
            m.error(where, "no cloud given: SkyPilot picks one at launch, archform cannot", hint)
        else:
            m.error(where, f"cloud {name!r} is not one archform models", hint, prefer="value")
        return None
    provider = known[name]
    m.put(("placement", "provider"), provider, where)
    region = _value(m, res, chosen, "region")
    zone = _value(m, res, chosen, "zone")
    if len(parts) > 1:
        m.put(("placement", "region"), parts[1], where)
    elif region is not None:
        m.put(("placement", "region"), region[1], region[0])
    if len(parts) > 2:  # cloud/region/zone
        m.put(("placement", "zones", 0), parts[2], where)
    elif zone is not None:
        m.put(("placement", "zones", 0), zone[1], zone[0])
    # SkyPilot places nodes by zone only; it creates no placement group for a task.
    m.put(("placement", "colocation"), "none", where, why="SkyPilot makes no placement group")
    return provider


def accelerator(value: Any) -> tuple[str, int] | None:
    """(GPU name, count) of an `accelerators` value (`H100:8`, `H100`, `{H100: 8}`)."""
    if isinstance(value, dict) and len(value) == 1:
        ((name, count),) = value.items()
        return str(name), int(count) if isinstance(count, int | float) else 1
    if isinstance(value, str):
        name, _, count = value.partition(":")
        return name.strip(), int(float(count)) if count.strip() else 1
    return None


def _instance(m: Mapper, provider: str, res: Loc, chosen: Loc) -> None:
    catalog = load_catalog()
    given = _value(m, res, chosen, "instance_type")
    if given is not None:
        m.put(("compute", "instance_type"), given[1], given[0])
        return
    acc = _value(m, res, chosen, "accelerators")
    parsed = accelerator(acc[1]) if acc is not None else None
    if acc is None or parsed is None:
        m.error(res, "no accelerators or instance_type", "archform lints GPU tasks; add one")
        return
    model, count = parsed
    fixed = fixed_instance(provider, model)
    if fixed is not None:
        model, instance = fixed
        label = spec_of(provider).label
        m.put(("compute", "instance_type"), instance, acc[0], why=f"SkyPilot's {label} {parsed[0]}")
        return
    gpu = catalog.gpu(model)
    matches = sorted(
        i.name
        for i in catalog.instances.values()
        if i.provider == provider
        and gpu is not None
        and i.gpu_model == gpu.name
        and i.gpu_count == count
    )
    if not matches:
        m.error(
            acc[0],
            f"no {provider} instance type with {count} x {model} in archform's catalog",
            "name the instance_type",
            prefer="value",
        )
        return
    m.put(("compute", "instance_type"), matches[0], acc[0], why=f"{count} x {model} on {provider}")
    if len(matches) > 1:
        m.warn(
            acc[0], f"{count} x {model} fits {', '.join(matches)}; archform assumed {matches[0]}"
        )


def _fabric(m: Mapper, res: Loc, chosen: Loc) -> None:
    tier = _value(m, res, chosen, "network_tier")
    if tier is not None and tier[1] == "best":
        return  # the instance's own GPU fabric (EFA, GPUDirect-TCPXO, InfiniBand)
    instance = m.out["compute"]["instance_type"]
    info = load_catalog().instance(str(instance))
    if info is None or info.fabric_kind == "ethernet":
        return
    at = tier[0] if tier is not None else ("resources",)
    why = "without network_tier: best SkyPilot attaches no GPU fabric; NCCL uses TCP"
    m.put(("fabric", "kind"), "ethernet", at, why=why)
    m.put(("fabric", "gbps_per_node"), int(info.ethernet_gbps), at, why=why)


def _mounts(m: Mapper) -> None:
    mounts = m.get(("file_mounts",))
    if not isinstance(mounts, dict):
        return
    index = 0
    for target, value in mounts.items():
        src: Loc = ("file_mounts", target)
        source = value
        if isinstance(value, dict):
            m.keys(src, MOUNT_KEYS, what="Invalid storage YAML: additional property.")
            source = value.get("source")
            if source is None and isinstance(value.get("name"), str):
                store = value.get("store", "s3")
                source = f"{'gs' if store == 'gcs' else store}://{value['name']}"
        if not isinstance(source, str) or not URI.match(source):
            m.unmapped(src, "a local path copied to the nodes; not storage archform models")
            continue
        text = str(target).lower()
        purpose = "checkpoints" if "ckpt" in text or "checkpoint" in text else "training_data"
        base = ("storage", index)
        name = re.sub(r"[^a-z0-9-]+", "-", text).strip("-")[:39] or f"mount{index}"
        if not name[0].isalpha():
            name = f"m-{name}"[:39]
        m.put((*base, "name"), name, src)
        m.put((*base, "kind"), "object", src, why="a bucket mounted or copied by SkyPilot")
        m.put((*base, "purpose"), purpose, src, why="from the mount path")
        m.put((*base, "source"), source.rstrip("/") + "/", src)
        index += 1
