"""SkyServe service YAML read as an InferenceFleet (see docs/peers/skypilot.md).

A SkyServe service is a SkyPilot task with a top-level `service:` section. Facts from
skypilot-org/skypilot@00052dfe: sky/utils/schemas.py get_service_schema (the keys of
`service`, `readiness_probe`, `replica_policy`, `load_balancer`, `tls`, all with
additionalProperties: False; `replica_policy` requires `min_replicas`), sky/serve/
service_spec.py (`replicas` and `replica_policy` are exclusive; without either the service
runs DEFAULT_MIN_REPLICAS; `max_replicas` defaults to `min_replicas`; a different
`max_replicas` needs `target_qps_per_replica`; the readiness path starts with `/`) and
sky/serve/constants.py (DEFAULT_MIN_REPLICAS = 1; the controller VM that runs the load
balancer: CONTROLLER_RESOURCES cpus 4+, memory 8+ GB). Service YAML reference:
https://docs.skypilot.co/en/latest/serving/service-yaml-spec.html

The replica's model server is read from `run` when it is a vLLM OpenAI server
(`vllm serve MODEL ...` or `python -m vllm.entrypoints.openai.api_server --model MODEL ...`),
with vLLM's own flag names (https://docs.vllm.ai/en/latest/configuration/engine_args.html):
--model, --tensor-parallel-size (-tp), --max-model-len, --dtype, --quantization, --port.
Without --max-model-len vLLM takes the model's max_position_embeddings from its config.json.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from archform.spec.catalog import load_catalog
from archform.spec.errors import Pos
from archform.spec.open_models import open_model
from archform.spec.paths import Loc
from archform.spec.peers import skypilot
from archform.spec.peers.mapper import Mapper
from archform.spec.provider import spec_of

NAME = "skyserve"
TITLE = "SkyServe service YAML"
DOCS = "https://docs.skypilot.co/en/latest/serving/service-yaml-spec.html"

SERVICE_KEYS = (
    "readiness_probe",
    "load_balancer",
    "pool",
    "replica_policy",
    "ports",
    "replicas",
    "workers",
    "load_balancing_policy",
    "tls",
)
PROBE_KEYS = (
    "path",
    "initial_delay_seconds",
    "timeout_seconds",
    "endpoint_probe_interval_seconds",
    "consecutive_failure_threshold_timeout",
    "post_data",
    "headers",
)
POLICY_KEYS = (
    "min_replicas",
    "max_replicas",
    "num_overprovision",
    "target_qps_per_replica",
    "dynamic_ondemand_fallback",
    "base_ondemand_fallback_replicas",
    "spot_placer",
    "upscale_delay_seconds",
    "downscale_delay_seconds",
)
LOAD_BALANCER_KEYS = ("stream_timeout_seconds",)
TLS_KEYS = ("keyfile", "certfile")
SERVICE_WHAT = "Invalid service YAML: additional property not allowed."
RESOURCES_WHAT = "Invalid resources YAML: additional property not allowed."
DEFAULT_MIN_REPLICAS = 1  # sky/serve/constants.py
# sky/serve/constants.py CONTROLLER_RESOURCES: the serve controller (and its load balancer)
# runs on its own VM of at least 4 vCPUs and 8 GB, apart from the replicas.
CONTROLLER_CPUS = 4
CONTROLLER_MEMORY_GIB = 8
# archform's server.load_time_seconds range (the readiness grace period maps onto it).
LOAD_TIME_RANGE = (10, 7200)

_SERVICE = re.compile(r"^service:", re.MULTILINE)
_KIND = re.compile(r"^kind:", re.MULTILINE)
_ENV = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)[bB](?![A-Za-z])")
_SUFFIX = re.compile(
    r"-(instruct|chat|hf|it|pt|base|fp8|awq|gptq|int4|int8|v\d+(\.\d+)*)$", re.IGNORECASE
)
API_SERVER = "vllm.entrypoints.openai.api_server"
_STOP = frozenset({"&&", "||", ";", "|", "&", ">", ">>", "<", "2>", "2>&1"})
# vLLM flags that take no value (store_true / BooleanOptionalAction in vLLM's engine and
# server arguments, https://docs.vllm.ai/en/latest/configuration/engine_args.html), so the
# word after one is the next argument (the model, when it comes last).
SWITCHES = frozenset(
    {
        "--trust-remote-code",
        "--enforce-eager",
        "--enable-prefix-caching",
        "--no-enable-prefix-caching",
        "--enable-chunked-prefill",
        "--no-enable-chunked-prefill",
        "--disable-log-requests",
        "--disable-log-stats",
        "--enable-auto-tool-choice",
        "--disable-custom-all-reduce",
        "--enable-lora",
    }
)
DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16"}
QUANTIZATION = {
    "fp8": "fp8",
    "awq": "int4",
    "awq_marlin": "int4",
    "gptq": "int4",
    "gptq_marlin": "int4",
    "bitsandbytes": "int4",
}
REASONS = {
    "setup": "setup commands are not part of the architecture; not checked",
    "envs": "environment variables are not checked",
    "secrets": "secrets are not part of the blueprint",
    "workdir": "the synced working directory is not part of the blueprint",
    "file_mounts": "archform reads a mount only as the model's weights location",
}
SERVICE_REASONS = {
    "load_balancing_policy": "how the load balancer picks a replica; archform has no counterpart",
    "load_balancer": "load balancer timeouts are not checked",
    "tls": "TLS at SkyServe's load balancer is not checked",
    "readiness_probe": "the probe's path and timings are not checked",
}
POLICY_REASONS = {
    "upscale_delay_seconds": "archform's autoscaling has a metric and a target, no delays",
    "downscale_delay_seconds": "archform's autoscaling has a metric and a target, no delays",
    "num_overprovision": "overprovisioned replicas are not modelled",
    "dynamic_ondemand_fallback": "on-demand fallback at spot shortage is not modelled; "
    "base_ondemand_fallback_replicas is the floor archform reads",
    "spot_placer": "spot placement across zones is not modelled",
}


def sniff(text: str) -> bool:
    """Line-based: a top-level `service:` and no archform `kind:`."""
    return bool(_SERVICE.search(text)) and not _KIND.search(text)


def claims(data: object) -> bool:
    """A SkyPilot task (no ParallelCluster or Cluster Toolkit keys) with a `service` section."""
    if not isinstance(data, dict) or "service" not in data:
        return False
    return not any(key in data for key in ("HeadNode", "Scheduling", "deployment_groups"))


def read(m: Mapper) -> None:
    """Map a SkyServe service onto an InferenceFleet."""
    m.kind = "InferenceFleet"
    res: Loc = ("resources",)
    m.keys((), skypilot.TOP_KEYS, what="Invalid task YAML: additional property not allowed.")
    m.keys(res, skypilot.RESOURCE_KEYS, what=RESOURCES_WHAT)
    candidates = _candidates(m, res)
    _check_service(m)
    if m.problems:
        return
    name = m.get(("name",))
    if isinstance(name, str) and re.fullmatch(r"[a-z][a-z0-9-]{0,38}", name):
        m.name = name
    regions = _placement(m, res, candidates)
    if not regions:
        return
    provider = str(m.out["placement"]["provider"])
    _gpu_pool(m, provider, res, candidates, len(regions))
    if m.problems:
        return
    used = Used()
    _server(m, res, candidates, used)
    if m.problems:
        return
    _system_pool(m, provider)
    used_envs, mount = tuple(dict.fromkeys(used.envs)), used.mount
    mapped: tuple[str, ...] = ("name", "resources", "service", "run")
    mapped += ("envs",) if used_envs else ()
    mapped += ("file_mounts",) if mount is not None else ()
    m.rest((), mapped, REASONS)
    if used_envs:
        m.rest(("envs",), used_envs, default="environment variables are not checked")
    if mount is not None:
        why = "a file mount other than the model's weights is not checked"
        m.rest(("file_mounts",), (mount,), default=why)
    done = ("infra", "cloud", "region", "accelerators", "instance_type", "use_spot", "ports")
    for loc in dict.fromkeys((res, *candidates)):
        m.rest(loc, (*done, "any_of", "ordered"))
    _service_rest(m)


# -- SkyServe's own checks -----------------------------------------------------------------


def _check_service(m: Mapper) -> None:
    svc: Loc = ("service",)
    m.keys(svc, SERVICE_KEYS, what=SERVICE_WHAT)
    for key, allowed in (
        ("readiness_probe", PROBE_KEYS),
        ("replica_policy", POLICY_KEYS),
        ("load_balancer", LOAD_BALANCER_KEYS),
        ("tls", TLS_KEYS),
    ):
        if isinstance(m.get((*svc, key)), dict):
            m.keys((*svc, key), allowed, what=SERVICE_WHAT)
    if m.problems:
        return
    if m.has((*svc, "pool")) or m.has((*svc, "workers")):
        key = "pool" if m.has((*svc, "pool")) else "workers"
        m.error(
            (*svc, key),
            "a SkyServe cluster pool (workers for jobs), not a serving fleet",
            "archform lints services; lint the pool's jobs as SkyPilot tasks",
        )
        return
    policy: Loc = (*svc, "replica_policy")
    if m.has((*svc, "replicas")) and m.has(policy):
        m.error(
            (*svc, "replicas"),
            "Cannot specify both `replicas` and `replica_policy` in the service YAML. "
            "Please use one of them.",
        )
    m.expect((*svc, "replicas"), int, "an integer")
    if isinstance(m.get(policy), dict):
        if not m.has((*policy, "min_replicas")):
            m.error(policy, "Invalid service YAML: 'min_replicas' is a required property")
        low = m.expect((*policy, "min_replicas"), int, "an integer")
        high = m.expect((*policy, "max_replicas"), int, "an integer")
        qps = m.get((*policy, "target_qps_per_replica"))
        if isinstance(low, int) and isinstance(high, int) and high < low:
            m.error(
                (*policy, "max_replicas"),
                "max_replicas must be greater than or equal to min_replicas. Found: "
                f"min_replicas={low}, max_replicas={high}",
                prefer="value",
            )
        elif qps is not None and high is None:
            m.error(
                (*policy, "target_qps_per_replica"),
                "max_replicas must be set where target_qps_per_replica is set.",
            )
        elif qps is None and high is not None and high != low:
            m.error(
                (*policy, "max_replicas"),
                "Detected different min_replicas and max_replicas while "
                "target_qps_per_replica is not set. To enable autoscaling, please set "
                "target_qps_per_replica.",
            )
    elif m.has(policy):
        m.error(policy, "expected a mapping", prefer="value")
    probe = m.get((*svc, "readiness_probe"))
    path = probe.get("path") if isinstance(probe, dict) else probe
    if isinstance(probe, dict) and "path" not in probe:
        m.error((*svc, "readiness_probe"), "Invalid service YAML: 'path' is a required property")
    elif path is not None and not str(path).startswith("/"):
        at: Loc = (
            (*svc, "readiness_probe", "path")
            if isinstance(probe, dict)
            else (*svc, "readiness_probe")
        )
        m.error(at, f"readiness_path must start with a slash (/). Got: {path}", prefer="value")


# -- where and on what -------------------------------------------------------------------


def _candidates(m: Mapper, res: Loc) -> list[Loc]:
    """The resources SkyServe may launch a replica with: each any_of/ordered entry, else one."""
    for key in ("ordered", "any_of"):
        options = m.get((*res, key))
        if isinstance(options, list) and options:
            locs: list[Loc] = [(*res, key, i) for i in range(len(options))]
            for loc in locs:
                m.keys(loc, skypilot.RESOURCE_KEYS, what=RESOURCES_WHAT)
            return locs
    return [res]


def _value(m: Mapper, res: Loc, cand: Loc, key: str) -> tuple[Loc, Any] | None:
    """A candidate's own key, else the top-level resources' (SkyPilot's override order)."""
    for base in (cand, res):
        if m.has((*base, key)):
            return (*base, key), m.get((*base, key))
    return None


def _where(m: Mapper, res: Loc, cand: Loc) -> tuple[str, Loc, str | None, Loc]:
    """(cloud, the key naming it, region, the key naming the region) of one candidate."""
    infra = _value(m, res, cand, "infra")
    if infra is not None and isinstance(infra[1], str):
        parts = infra[1].split("/")
        named_region = parts[1] if len(parts) > 1 and parts[1] != "*" else None
        return parts[0].lower(), infra[0], named_region, infra[0]
    cloud = _value(m, res, cand, "cloud")
    region = _value(m, res, cand, "region")
    name = str(cloud[1]).lower() if cloud is not None else ""
    named: Loc = cloud[0] if cloud is not None else cand
    if region is not None:
        return name, named, str(region[1]), region[0]
    return name, named, None, named


def _placement(m: Mapper, res: Loc, candidates: list[Loc]) -> list[str]:
    spots = [_where(m, res, cand) for cand in candidates]
    cloud, first, _, _ = spots[0]
    hint = skypilot.cloud_hint()
    known = skypilot.clouds()
    if cloud not in known:
        if not cloud:
            m.error(first, "no cloud given: SkyServe picks one at launch, archform cannot", hint)
        else:
            m.error(first, f"cloud {cloud!r} is not one archform models", hint, prefer="value")
        return []
    provider = known[cloud]
    m.put(("placement", "provider"), provider, first)
    regions: list[str] = []
    for cand, (other, _, region, at) in zip(candidates, spots, strict=True):
        if other != cloud:
            m.warn(cand, f"a candidate on {other}: archform's fleet is on one cloud ({cloud})")
        elif region is None:
            m.warn(at, f"no region: SkyServe may launch replicas in any {cloud} region")
        elif region not in regions:
            m.put(("placement", "regions", len(regions)), region, at)
            regions.append(region)
    if not regions:
        m.error(
            first,
            "no region given: SkyServe picks the regions at launch, archform cannot",
            "set resources.region, or list the regions under resources.any_of",
        )
    return regions


def _spread(count: int, regions: int, *, up: bool) -> int:
    return math.ceil(count / regions) if up else count // regions


def _gpu_pool(m: Mapper, provider: str, res: Loc, candidates: list[Loc], regions: int) -> None:
    _instance(m, provider, res, candidates)
    svc: Loc = ("service",)
    policy: Loc = (*svc, "replica_policy")
    why = (
        f"SkyServe counts replicas across all {regions} regions; an even spread"
        if regions > 1
        else ""
    )
    if m.has((*svc, "replicas")):
        low = high = int(m.get((*svc, "replicas")))
        low_at = high_at = (*svc, "replicas")
    elif m.has(policy):
        low = int(m.get((*policy, "min_replicas")))
        high = int(m.get((*policy, "max_replicas"), low))
        low_at = (*policy, "min_replicas")
        high_at = (*policy, "max_replicas") if m.has((*policy, "max_replicas")) else low_at
    else:
        low = high = DEFAULT_MIN_REPLICAS
        low_at = high_at = svc
        why = "SkyServe's default without replicas or replica_policy: 1 replica"
    m.put(("gpu_pool", "min_nodes_per_region"), _spread(low, regions, up=False), low_at, why=why)
    m.put(
        ("gpu_pool", "max_nodes_per_region"),
        max(1, _spread(high, regions, up=True)),
        high_at,
        why=why,
    )
    spot = _value(m, res, candidates[0], "use_spot")
    if spot is not None and spot[1] is True:
        m.put(("gpu_pool", "purchase"), "spot", spot[0])
        base = m.get((*policy, "base_ondemand_fallback_replicas"))
        if isinstance(base, int) and base > 0:
            at: Loc = (*policy, "base_ondemand_fallback_replicas")
            m.put(("gpu_pool", "on_demand_floor_per_region"), base // regions, at, why=why)
    qps = m.get((*policy, "target_qps_per_replica"))
    at = (*policy, "target_qps_per_replica")
    if isinstance(qps, dict):
        acc = _value(m, res, candidates[0], "accelerators")
        parsed = skypilot.accelerator(acc[1]) if acc is not None else None
        keys = [f"{parsed[0]}:{parsed[1]}", parsed[0]] if parsed else []
        picked = next((qps[k] for k in keys if k in qps), None)
        if picked is None:
            m.unmapped(at, "no target for the first candidate's accelerator")
            return
        qps = picked
    if isinstance(qps, int | float) and not isinstance(qps, bool) and qps > 0:
        m.put(("autoscaling", "metric"), "requests_per_second", at, why="SkyServe scales on QPS")
        m.put(("autoscaling", "target"), qps, at)


def _instance(m: Mapper, provider: str, res: Loc, candidates: list[Loc]) -> None:
    cand = candidates[0]
    given = _value(m, res, cand, "instance_type")
    first = _value(m, res, cand, "accelerators")
    for other in candidates[1:]:
        acc = _value(m, res, other, "accelerators")
        if acc is not None and first is not None and acc[1] != first[1]:
            m.unmapped(acc[0], "another GPU choice; archform lints the first candidate's")
    if given is not None:
        m.put(("gpu_pool", "instance_type"), given[1], given[0])
        return
    parsed = skypilot.accelerator(first[1]) if first is not None else None
    if first is None or parsed is None:
        m.error(res, "no accelerators or instance_type", "archform lints GPU services; add one")
        return
    model, count = parsed
    catalog = load_catalog()
    fixed = skypilot.fixed_instance(provider, model)
    if fixed is not None:
        model, instance = fixed
        label = spec_of(provider).label
        why = f"SkyPilot's {label} {parsed[0]}"
        m.put(("gpu_pool", "instance_type"), instance, first[0], why=why)
        return
    gpu = catalog.gpu(model)
    matches = sorted(
        (
            i
            for i in catalog.instances.values()
            if gpu is not None
            and i.provider == provider
            and i.gpu_model == gpu.name
            and i.gpu_count == count
        ),
        key=lambda i: (i.vcpus, i.memory_gib, i.name),
    )
    if not matches:
        m.error(
            first[0],
            f"no {provider} instance type with {count} x {model} in archform's catalog",
            "name the instance_type",
            prefer="value",
        )
        return
    why = f"the smallest {provider} instance with {count} x {model}"
    why += " (SkyPilot launches the cheapest)"
    m.put(("gpu_pool", "instance_type"), matches[0].name, first[0], why=why)


def _system_pool(m: Mapper, provider: str) -> None:
    """The serve controller's VM, which runs the load balancer apart from the GPU replicas."""
    cpus = sorted(
        (
            i
            for i in load_catalog().instances.values()
            if i.provider == provider
            and not i.gpu_count
            and i.vcpus >= CONTROLLER_CPUS
            and i.memory_gib >= CONTROLLER_MEMORY_GIB
        ),
        key=lambda i: (i.vcpus, i.memory_gib, i.name),
    )
    if not cpus:
        return
    why = "SkyServe's controller VM runs the load balancer apart from the replicas (4+ vCPU, 8+ GB)"
    m.put(("system_pool", "instance_type"), cpus[0].name, ("service",), why=why)
    m.put(("system_pool", "nodes_per_region"), 1, ("service",), why=why)


# -- the model server ----------------------------------------------------------------------


@dataclass
class Used:
    """What the server's mapping read besides `run`: envs it expanded, the weights' mount."""

    envs: list[str] = field(default_factory=list)
    mount: str | None = None


@dataclass
class Command:
    """A vLLM server command found in `run`: its model, flags and their file positions."""

    model: str | None = None
    flags: dict[str, str] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)


def _env_values(m: Mapper) -> dict[str, str]:
    envs = m.get(("envs",))
    if not isinstance(envs, dict):
        return {}
    return {str(k): str(v) for k, v in envs.items() if isinstance(v, str | int | float)}


def _vllm(text: str) -> Command | None:
    """The first vLLM OpenAI server command in a shell script, or None."""
    joined = re.sub(r"\\\r?\n", " ", text)
    for line in joined.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        for index, token in enumerate(tokens):
            after = tokens[index + 1 : index + 2]
            serve = token.endswith("vllm") and after == ["serve"]
            if serve or (token == "-m" and after == [API_SERVER]):
                return _flags(tokens[index + 2 :])
    return None


def _flags(tokens: list[str]) -> Command:
    cmd = Command()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in _STOP:
            break
        if token.startswith("-"):
            name, eq, value = token.partition("=")
            if not eq:
                nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
                if name in SWITCHES:
                    value = "true"
                elif nxt and not nxt.startswith("-") and nxt not in _STOP:
                    value = nxt
                    i += 1
                else:
                    value = "true"
            name = {"-tp": "--tensor-parallel-size"}.get(name, name)
            cmd.flags[name] = value
            cmd.order.append(name)
        elif cmd.model is None:
            cmd.model = token
        i += 1
    if cmd.model is None:
        cmd.model = cmd.flags.get("--model")
    return cmd


def _run_lines(m: Mapper) -> tuple[int, int]:
    """The file lines (1-based, inclusive) the `run` value spans."""
    start = m.pos(("run",)).line
    lines = m.raw.source.lines
    end = start
    for number in range(start + 1, len(lines) + 1):
        text = lines[number - 1]
        if text and not text[0].isspace() and not text.startswith("#"):
            break
        end = number
    return start, end


def _locate(m: Mapper, needle: str, default: Pos) -> Pos:
    """The position of `needle` (a whole word) in the `run` value, else `default`."""
    start, end = _run_lines(m)
    lines = m.raw.source.lines
    word = re.compile(r"(?<![A-Za-z0-9_-])" + re.escape(needle) + r"(?![A-Za-z0-9_-])")
    for number in range(start, end + 1):
        text = lines[number - 1]
        skip = text.index(":") + 1 if number == start and ":" in text else 0
        found = word.search(text, skip)
        if found:
            return Pos(number, found.start() + 1)
    return default


def _server(m: Mapper, res: Loc, candidates: list[Loc], used: Used) -> None:
    """Map the vLLM command in `run` (recording in `used` the envs and mount it reads)."""
    run = m.get(("run",))
    envs = _env_values(m)

    def expand(match: re.Match[str]) -> str:
        key = match.group(1) or match.group(2)
        if key in envs:
            used.envs.append(key)
            return envs[key]
        return match.group(0)

    cmd = _vllm(_ENV.sub(expand, run)) if isinstance(run, str) else None
    if cmd is not None and not cmd.model:
        m.error(
            ("run",),
            "the vLLM command in run names no model (neither `vllm serve MODEL` nor --model)",
            "put the model right after `vllm serve`, or give --model MODEL",
        )
        return
    if cmd is None:
        m.error(
            ("run",),
            "no vLLM server in run: archform reads a service whose run starts "
            "`vllm serve MODEL` or `python -m vllm.entrypoints.openai.api_server --model MODEL`",
            "lint the fleet as an archform InferenceFleet blueprint instead",
        )
        return
    run_pos = m.pos(("run",))
    serve_pos = _locate(m, "vllm", run_pos)
    m.at[("run", "vllm")] = serve_pos
    for flag in cmd.order:
        m.at[("run", flag)] = _locate(m, flag, serve_pos)
    model_src: Loc = ("run", "--model") if "--model" in cmd.flags else ("run", "model")
    model = str(cmd.model)
    if model_src not in m.at:
        raw_model = next((t for t in str(run).split() if model in _ENV.sub(expand, t)), model)
        m.at[model_src] = _locate(m, raw_model, serve_pos)
    m.put(("server", "kind"), "vllm", ("run", "vllm"))
    _model(m, cmd, model_src, used)
    tp = cmd.flags.get("--tensor-parallel-size")
    if tp is not None and tp.isdigit():
        m.put(("server", "tensor_parallel"), int(tp), ("run", "--tensor-parallel-size"))
    else:
        m.put(("server", "tensor_parallel"), 1, ("run", "vllm"), why="vLLM's default")
    _port(m, cmd, res, candidates)
    _load_time(m)
    mapped = {"--model", "--tensor-parallel-size", "--max-model-len", "--dtype", "--port"}
    mapped |= {"--quantization"} if cmd.flags.get("--quantization") in QUANTIZATION else set()
    rest = [f for f in cmd.order if f not in mapped]
    if rest:
        m.unmapped(("run",), "vLLM flags not read: " + ", ".join(rest))


def _canonical(model_id: str) -> str | None:
    """The archform table name of a model id (meta-llama/Llama-3.1-8B-Instruct: llama-3.1-8b)."""
    name = model_id.rstrip("/").rsplit("/", 1)[-1].lower()
    name = name.removeprefix("meta-")
    while True:
        if open_model(name) is not None:
            return name
        stripped = _SUFFIX.sub("", name)
        if stripped == name:
            return None
        name = stripped


def _model(m: Mapper, cmd: Command, src: Loc, used: Used) -> None:
    model_id = str(cmd.model)
    source = _weights(m, model_id, src, used)
    if m.problems:
        return
    # A local path names the weights by the bucket mounted there (.../llama-3-8b-instruct/).
    named = model_id if source.startswith("hf://") else source
    short = re.sub(r"[^A-Za-z0-9._-]", "-", named.rstrip("/").rsplit("/", 1)[-1])[:128]
    m.put(("model", "name"), short.lstrip("-._") or "model", src)
    base = _canonical(named)
    if base is not None:
        m.put(("model", "base"), base, src, why="archform's table name of the model")
    else:
        size = _SIZE.search(named.rsplit("/", 1)[-1] or named)
        if size is None:
            m.error(
                src,
                f"cannot tell the size of {named!r}: it is not in archform's model table "
                "and its name gives no parameter count",
                "lint it as an archform InferenceFleet blueprint with model.params",
            )
            return
        m.put(("model", "params"), float(size.group(1)) * 1e9, src, why="from the model's name")
    m.put(("model", "source"), source, src)
    length = cmd.flags.get("--max-model-len")
    known = open_model(base) if base else None
    if length is not None and length.isdigit():
        m.put(("model", "max_context_tokens"), int(length), ("run", "--max-model-len"))
    elif known is not None:
        why = "vLLM's default max_model_len: the model's max_position_embeddings"
        m.put(("model", "max_context_tokens"), known.max_context, ("run", "vllm"), why=why)
    dtype = cmd.flags.get("--dtype")
    quant = cmd.flags.get("--quantization")
    if quant in QUANTIZATION:
        m.put(("model", "precision"), QUANTIZATION[str(quant)], ("run", "--quantization"))
    elif dtype in DTYPES:
        m.put(("model", "precision"), DTYPES[str(dtype)], ("run", "--dtype"))


def _weights(m: Mapper, model_id: str, src: Loc, used: Used) -> str:
    """Where a replica reads the weights: a bucket mounted at the path, else Hugging Face."""
    if not model_id.startswith(("/", "~", ".")):
        return f"hf://{model_id}"
    mounts = m.get(("file_mounts",))
    for target, value in mounts.items() if isinstance(mounts, dict) else ():
        source = value.get("source") if isinstance(value, dict) else value
        prefix = str(target).rstrip("/")
        under = model_id == prefix or model_id.startswith(prefix + "/")
        if under and isinstance(source, str) and re.match(r"^(s3|gs)://", source):
            used.mount = str(target)
            return source.rstrip("/") + model_id[len(prefix) :].rstrip("/") + "/"
    m.error(
        src,
        f"the model path {model_id} is not a bucket mounted by file_mounts: archform cannot "
        "tell where the weights come from",
        "mount the weights' s3:// or gs:// bucket at that path under file_mounts",
    )
    return ""


def _port(m: Mapper, cmd: Command, res: Loc, candidates: list[Loc]) -> None:
    port: tuple[Loc, Any] | None = None
    if "--port" in cmd.flags:
        port = ("run", "--port"), cmd.flags["--port"]
    elif m.has(("service", "ports")):
        port = ("service", "ports"), m.get(("service", "ports"))
    else:
        port = _value(m, res, candidates[0], "ports")
    if port is None:
        return
    value = port[1][0] if isinstance(port[1], list) and port[1] else port[1]
    text = str(value)
    if text.isdigit() and 1024 <= int(text) <= 65535:
        m.put(("server", "port"), int(text), port[0])


def _load_time(m: Mapper) -> None:
    at: Loc = ("service", "readiness_probe", "initial_delay_seconds")
    delay = m.get(at)
    if not isinstance(delay, int | float) or isinstance(delay, bool):
        return
    low, high = LOAD_TIME_RANGE
    if low <= delay <= high:
        why = "SkyServe ignores readiness failures for this long: the model's load time"
        m.put(("server", "load_time_seconds"), int(delay), at, why=why)
    else:
        m.unmapped(at, f"outside archform's {low}-{high} s model load time")


def _service_rest(m: Mapper) -> None:
    svc: Loc = ("service",)
    probe: Loc = (*svc, "readiness_probe")
    mapped = ("replica_policy", "replicas", "ports")
    if isinstance(m.get(probe), dict):
        m.rest(svc, (*mapped, "readiness_probe"), SERVICE_REASONS)
        loaded = ("initial_delay_seconds",) if ("server", "load_time_seconds") in m.origins else ()
        m.rest(probe, loaded, default="the probe's path and timings are not checked")
    else:
        m.rest(svc, mapped, SERVICE_REASONS)
    policy: Loc = (*svc, "replica_policy")
    done = ("min_replicas", "max_replicas", "target_qps_per_replica")
    spot = m.out.get("gpu_pool", {}).get("purchase") == "spot"
    m.rest(policy, (*done, *(("base_ondemand_fallback_replicas",) if spot else ())), POLICY_REASONS)
