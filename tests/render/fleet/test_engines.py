"""Serving engines are one record each (archform.spec.engines), and only that record shapes
the model server a fleet generates.

- An engine added as one record (registered here, nothing else) generates, through the real
  `archform generate`, a Deployment with exactly its own settings: no argument, variable,
  port, probe or metric of another engine leaks in.
- Each bundled engine's generated Deployment and ScaledObject carry exactly the arguments,
  environment, ports, probes and metrics stated below from each engine's own docs/source
  (the flags of `vllm serve`, `text-generation-launcher`, `tritonserver`; NIM's variables),
  and those are the record's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

import support
from archform.cli._app import build
from archform.render.generate import build_files
from archform.spec import load_text
from archform.spec.engines import BUNDLED, engine, kinds, register, unregister
from archform.spec.engines.record import (
    FACT_GROUPS,
    ApiKey,
    Engine,
    Env,
    Metrics,
    SleepDrain,
    Source,
)
from support import BLUEPRINTS

AZURE = BLUEPRINTS / "inference-3region-a10.yaml"  # Front Door, API key, three regions
AWS = BLUEPRINTS / "inference-h100-single-region.yaml"  # one region, tensor_parallel 4

# A made-up engine, every value distinct from the bundled engines'.
TOY = Engine(
    kind="toyserve",
    image="registry.example.org/toyserve:1.2.3",
    args=("serve", "--weights-dir={weights}", "--listen={port}", "--shards", "{tensor_parallel}"),
    env=(Env("TOYSERVE_NAME", "{served_name}"), Env("TOYSERVE_CONTEXT", "{max_context}")),
    ready_path="/toy/ready",
    live_path="/toy/alive",
    metrics=Metrics(
        queue="toy_waiting_requests",
        kv=("toy_kv_fraction",),
        ok="toy_requests_ok_total",
        port=9464,
        path="/toy/metrics",
    ),
    drain=SleepDrain(),
    api_key=ApiKey(env="TOYSERVE_TOKEN", checkov_reason="toyserve reads its key from env"),
    sources={g: Source("https://example.org/toyserve/docs", "1.2.3") for g in FACT_GROUPS},
)


@pytest.fixture
def toy() -> Iterator[Engine]:
    register(TOY)
    try:
        yield TOY
    finally:
        unregister(TOY.kind)


def _switch(text: str, kind: str, image: str | None = None, auth: str | None = None) -> str:
    """The bundled blueprint with its server switched to `kind` (its default image)."""
    text, n = re.subn(r"(?m)^  kind: vllm\n  image: \S+\n", f"  kind: {kind}\n", text)
    assert n == 1, "the bundled fleet blueprint names its vLLM server and image"
    if image:
        text = text.replace(f"  kind: {kind}\n", f"  kind: {kind}\n  image: {image}\n")
    if auth:
        assert "\nedge:" not in text, "this blueprint sets no edge block"
        text += f"edge:\n  auth: {auth}\n"
    return text


def _generate(tmp_path: Path, text: str) -> dict[str, str]:
    """`archform generate` (in-process, so a registered test engine is seen): path -> text."""
    src = tmp_path / "fleet.yaml"
    src.write_text(text, "utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(build(["generate"]), ["generate", str(src), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return {
        str(p.relative_to(out)): p.read_text("utf-8") for p in sorted(out.rglob("*")) if p.is_file()
    }


def _objects(files: dict[str, str], kind: str) -> list[dict[str, Any]]:
    found = []
    for path, text in files.items():
        if path.startswith("kubernetes/") and path.endswith(".yaml"):
            obj = yaml.safe_load(text)
            if obj["kind"] == kind:
                found.append(obj)
    assert found, f"no {kind} generated"
    return found


def _server(dep: dict[str, Any]) -> dict[str, Any]:
    containers = dep["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["server"]
    return dict(containers[0])


def _tokens(e: Engine) -> set[str]:
    """What only engine `e` puts into a fleet: flags, variables, metric names, paths, image."""
    # Its flags (--x) and program names (tritonserver, sglang.launch_server); not plain
    # values such as 0.0.0.0, nor the interpreter.
    flags = {a.split("=")[0] for a in e.args if a.startswith("--")}
    flags |= {a for a in e.args if re.fullmatch(r"[a-z][\w.]*", a) and a != "python3"}
    metrics = {e.metrics.queue, e.metrics.ok, *e.metrics.kv}
    if e.metrics.running:
        metrics.add(e.metrics.running)
    keys = {e.api_key.env} if e.api_key else set()
    extra = {e.middleware_arg} if e.middleware_arg else set()
    image = {e.image} if e.image else set()
    return flags | {v.name for v in e.env} | metrics | keys | extra | image


def test_an_engine_added_as_one_record_generates_only_its_own_settings(
    toy: Engine, tmp_path: Path
) -> None:
    raw = yaml.safe_load(AZURE.read_text("utf-8"))
    files = _generate(tmp_path, _switch(AZURE.read_text("utf-8"), toy.kind))
    regions = raw["placement"]["regions"]
    deployments = _objects(files, "Deployment")
    assert len(deployments) == len(regions) == 3
    model, tp = raw["model"]["name"], raw["server"]["tensor_parallel"]
    context = raw["model"]["max_context_tokens"]
    for dep in deployments:
        c = _server(dep)
        assert c["image"] == "registry.example.org/toyserve:1.2.3"
        assert c["args"] == [
            "serve",
            "--weights-dir=/models/weights",
            "--listen=8000",
            "--shards",
            str(tp),
        ]
        secret = {"name": f"{raw['name']}-api-key", "key": "api-key"}
        assert c["env"] == [
            {"name": "TOYSERVE_NAME", "value": model},
            {"name": "TOYSERVE_CONTEXT", "value": str(context)},
            {"name": "TOYSERVE_TOKEN", "valueFrom": {"secretKeyRef": secret}},
        ]
        assert c["ports"] == [
            {"name": "http", "containerPort": 8000, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9464, "protocol": "TCP"},
        ]
        # With an API key the probes use the liveness path (the ready path may need the key).
        assert c["readinessProbe"]["httpGet"]["path"] == "/toy/alive"
        assert c["startupProbe"]["httpGet"]["path"] == "/toy/alive"
        assert c["livenessProbe"]["httpGet"]["path"] == "/toy/alive"
        assert c["lifecycle"]["preStop"]["exec"]["command"][0] == "sleep"
        assert [m["mountPath"] for m in c["volumeMounts"]] == ["/dev/shm", "/models"]
        notes = dep["spec"]["template"]["metadata"]["annotations"]
        assert notes["prometheus.io/port"] == "9464"
        assert notes["prometheus.io/path"] == "/toy/metrics"
        skips = " ".join(dep["metadata"].get("annotations", {}).values())
        assert "toyserve reads its key from env" in skips
    for so in _objects(files, "ScaledObject"):
        query = so["spec"]["triggers"][0]["metadata"]["query"]
        assert query.startswith("sum(toy_waiting_requests{"), query
    # No other engine's flags, variables, metrics, paths or images anywhere in the manifests
    # or the program's embedded objects (and no Front Door middleware: toyserve has none).
    shipped = {p: t for p, t in files.items() if p.startswith("kubernetes/")}
    shipped["pulumi/fleet_objects.py"] = files["pulumi/fleet_objects.py"]
    for other in BUNDLED:
        foreign = _tokens(other) - _tokens(toy) - {"serve"}
        for path, text in shipped.items():
            leaked = sorted(t for t in foreign if t in text)
            assert not leaked, f"{path} carries {other.kind}'s {leaked}"
    for path, text in shipped.items():
        for word in ("HF_HUB_OFFLINE", "NIM_", "PYTHONPATH", "ARCHFORM_FRONT_DOOR_ID"):
            assert word not in text, f"{path} carries {word}"


def test_an_unregistered_engine_is_refused_at_its_line(tmp_path: Path) -> None:
    src = tmp_path / "fleet.yaml"
    text = _switch(AZURE.read_text("utf-8"), "toyserve")
    src.write_text(text, "utf-8")
    result = CliRunner().invoke(build(["validate"]), ["validate", str(src)])
    assert result.exit_code == 2
    line = text.splitlines().index("  kind: toyserve") + 1
    assert f"fleet.yaml:{line}:9: error: server.kind: expected one of 'vllm', 'tgi', " in (
        result.output
    )
    assert "got 'toyserve'" in result.output


# What each bundled engine's server gets, from the engine's own docs and source (see each
# record's `sources`), for the AWS blueprint (tensor_parallel 4, port 8000, no API key).
# Engines without a default image get one named here (NIM: per model; SGLang: per release).
IMAGES = {
    "nim": "nvcr.io/nim/meta/llama-3.1-70b-instruct:1.8.4",
    "sglang": "lmsysorg/sglang:v0.5.3-cu126",
}
OFFLINE = [{"name": "HF_HUB_OFFLINE", "value": "1"}, {"name": "TRANSFORMERS_OFFLINE", "value": "1"}]


def _expected(kind: str, model: str, context: int, seqs: int) -> dict[str, Any]:
    if kind == "vllm":
        return {
            "args": [
                *("--model", "/models/weights", "--served-model-name", model),
                *("--tensor-parallel-size", "4", "--max-model-len", str(context)),
                *("--port", "8000", "--disable-log-requests", "--max-num-seqs", str(seqs)),
            ],
            "env": OFFLINE,
            "paths": ("/v1/models", "/health"),
            # /v1/models needs the key (the blueprint keeps edge.auth: api_key): probes
            # use /health.
            "key": "VLLM_API_KEY",
            "probe": "/health",
            "metrics_port": 8000,
            "queue": 'sum(vllm:num_requests_running{namespace="{ns}"}) + '
            'sum(vllm:num_requests_waiting{namespace="{ns}"})',
            "drain": "python3",
        }
    if kind == "tgi":
        return {
            "args": [
                *("--model-id", "/models/weights", "--num-shard", "4", "--port", "8000"),
                *("--max-total-tokens", str(context)),
            ],
            "env": OFFLINE,
            "paths": ("/health", "/info"),
            # TGI's key guards the generation routes only; /health stays open.
            "key": "API_KEY",
            "probe": "/health",
            "metrics_port": 8000,
            "queue": 'sum(tgi_queue_size{namespace="{ns}"})',
            "drain": "sleep",
        }
    if kind == "triton":
        return {
            "args": [
                "tritonserver",
                "--model-repository=/models/weights",
                "--http-port=8000",
                "--metrics-port=8002",
            ],
            "env": None,
            "paths": ("/v2/health/ready", "/v2/health/live"),
            "key": None,
            "probe": "/v2/health/ready",
            "metrics_port": 8002,
            "queue": 'sum(nv_inference_pending_request_count{namespace="{ns}"})',
            "drain": "sleep",
        }
    if kind == "sglang":
        return {
            "args": [
                *("python3", "-m", "sglang.launch_server", "--model-path", "/models/weights"),
                *("--served-model-name", model, "--tp-size", "4"),
                *("--context-length", str(context), "--host", "0.0.0.0", "--port", "8000"),
                *("--enable-metrics", "--max-running-requests", str(seqs)),
            ],
            "env": OFFLINE,
            "paths": ("/v1/models", "/health"),
            "key": None,
            "probe": "/v1/models",
            "metrics_port": 8000,
            "queue": 'sum(sglang:num_running_reqs{namespace="{ns}"}) + '
            'sum(sglang:num_queue_reqs{namespace="{ns}"})',
            "drain": "python3",
        }
    assert kind == "nim"
    return {
        "args": None,
        "env": [
            {"name": "NIM_MODEL_NAME", "value": "/models/weights"},
            {"name": "NIM_MODEL_PATH", "value": "/models/weights"},
            {"name": "NIM_SERVED_MODEL_NAME", "value": model},
            {"name": "NIM_SERVER_PORT", "value": "8000"},
        ],
        "paths": ("/v1/health/ready", "/v1/health/live"),
        "key": None,
        "probe": "/v1/health/ready",
        "metrics_port": 8000,
        "metrics_path": "/v1/metrics",
        "queue": 'sum(num_requests_waiting{namespace="{ns}"})',
        "drain": "sleep",
    }


def test_every_bundled_engine_is_covered_here() -> None:
    assert kinds()[: len(BUNDLED)] == ("vllm", "tgi", "triton", "nim", "sglang")


@pytest.mark.parametrize("kind", [e.kind for e in BUNDLED])
def test_each_engine_generates_exactly_its_record(kind: str) -> None:
    raw = yaml.safe_load(AWS.read_text("utf-8"))
    e = engine(kind)
    image = IMAGES[kind] if e.image is None else None
    text = _switch(AWS.read_text("utf-8"), kind, image, "none" if e.api_key is None else None)
    blueprints = load_text(text, "<fleet>")
    files = {f.path: f.content for f in build_files(blueprints)}
    [dep] = _objects(files, "Deployment")
    [so] = _objects(files, "ScaledObject")
    c = _server(dep)
    # The per-replica concurrency is the estimate's (tests/estimate check it), read back here.
    cap = {"vllm": "--max-num-seqs", "sglang": "--max-running-requests"}.get(kind)
    seqs = int(c["args"][c["args"].index(cap) + 1]) if cap else 0
    want = _expected(kind, raw["model"]["name"], raw["model"]["max_context_tokens"], seqs)
    assert c["image"].split("@")[0] == (e.image or IMAGES[kind])
    assert c.get("args") == want["args"]
    keyed = [x["name"] for x in c.get("env", []) if "valueFrom" in x]
    assert keyed == ([want["key"]] if want["key"] else [])
    assert (e.api_key.env if e.api_key else None) == want["key"]
    env = [x for x in c.get("env", []) if "valueFrom" not in x] or None
    assert env == want["env"]
    ready, live = want["paths"]
    assert (e.ready_path, e.live_path) == (ready, live)
    # The blueprint's default edge.auth is api_key where the engine reads a key.
    probe = want["probe"]
    assert c["readinessProbe"]["httpGet"]["path"] == probe
    assert c["livenessProbe"]["httpGet"]["path"] == live
    ports = [p["containerPort"] for p in c["ports"]]
    assert ports == sorted({8000, want["metrics_port"]})
    notes = dep["spec"]["template"]["metadata"]["annotations"]
    assert notes["prometheus.io/port"] == str(want["metrics_port"])
    assert notes["prometheus.io/path"] == want.get("metrics_path", "/metrics")
    assert c["lifecycle"]["preStop"]["exec"]["command"][0] == want["drain"]
    query = so["spec"]["triggers"][0]["metadata"]["query"]
    assert query == want["queue"].replace("{ns}", raw["name"])


@pytest.mark.parametrize("record", BUNDLED, ids=[e.kind for e in BUNDLED])
def test_each_engine_sources_every_group_of_facts(record: Engine) -> None:
    assert set(record.sources) == set(FACT_GROUPS)
    for group, source in record.sources.items():
        assert source.url.startswith("https://"), (group, source)
        assert source.version, (group, source)
    if record.image is not None:
        # The image's tag is the release its facts were read at.
        tag = record.image.rsplit(":", 1)[1]
        assert tag.lstrip("v").startswith(record.sources["image"].version.lstrip("v")), tag


def test_a_record_naming_no_slot_or_missing_a_source_is_refused() -> None:
    base = dict(
        kind="bad",
        image=None,
        env=(),
        ready_path="/r",
        live_path="/l",
        metrics=Metrics(queue="q", kv=("k",), ok="o"),
        drain=SleepDrain(),
    )
    sources = {g: Source("https://example.org", "1") for g in FACT_GROUPS}
    with pytest.raises(ValueError, match=r"\{model\} in '--model=\{model\}' is not a slot"):
        Engine(args=("--model={model}",), sources=sources, **base)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no source for metrics, drain"):
        partial = {g: s for g, s in sources.items() if g not in ("metrics", "drain")}
        Engine(args=(), sources=partial, **base)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="running gauge"):
        running = Metrics(queue="q", kv=("k",), ok="o", running="r")
        Engine(args=(), sources=sources, **{**base, "metrics": running})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="already registered"):
        register(engine("vllm"))


@pytest.mark.slow
def test_mypy_refuses_a_match_that_forgets_a_drain_or_a_slot(tmp_path: Path) -> None:
    """The renderer's matches end in assert_never: a new Drain variant or Slot member that
    a match does not handle is a mypy error, not a silent fall-through (the old bug: any
    unknown kind got NIM's environment)."""
    support.require_module("mypy")
    import mypy.api as api

    probe = tmp_path / "probe.py"
    probe.write_text(
        "from typing import assert_never\n"
        "from archform.spec.engines.record import Drain, GaugeDrain, Slot\n\n\n"
        "def drain(d: Drain) -> str:\n"
        "    match d:\n"
        "        case GaugeDrain():\n"
        "            return 'gauges'\n"
        "        case _:\n"
        "            assert_never(d)\n\n\n"
        "def slot(s: Slot) -> str:\n"
        "    match s:\n"
        "        case Slot.WEIGHTS | Slot.PORT:\n"
        "            return s.value\n"
        "        case _:\n"
        "            assert_never(s)\n",
        "utf-8",
    )
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nmypy_path = {Path(__file__).resolve().parents[3] / 'src'}\n")
    out, _, status = api.run(
        [
            *(str(probe), "--strict", "--follow-imports=silent", "--no-incremental"),
            *(f"--config-file={config}", f"--cache-dir={tmp_path / 'cache'}"),
        ]
    )
    assert status == 1, out
    assert 'Argument 1 to "assert_never" has incompatible type "SleepDrain"' in out, out
    assert "Slot.SERVED_NAME" in out, out


def test_shared_code_names_no_engine() -> None:
    """No string in archform's code outside spec/engines is an engine's kind: every branch
    on an engine is a field of its record. (spec/peers reads other tools' files, whose
    commands name the engine they run, e.g. SkyServe's `vllm serve`.)"""
    import ast

    src = Path(__file__).resolve().parents[3] / "src" / "archform"
    kinds = {e.kind for e in BUNDLED}
    found = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel.startswith(("spec/engines/", "spec/peers/")):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Constant) and node.value in kinds:
                found.append(f"{rel}:{node.lineno}: {node.value!r}")
    assert not found, "\n".join(found)
