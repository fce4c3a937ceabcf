"""NVIDIA NIM for LLMs (https://docs.nvidia.com/nim/large-language-models/)."""

from __future__ import annotations

from archform.spec.engines.record import Engine, Env, Metrics, SleepDrain, Source

_DOCS = "https://docs.nvidia.com/nim/large-language-models"
RELEASE = "2.0.9"  # the NIM LLM release whose reference pages the facts below were read in

ENGINE = Engine(
    kind="nim",
    # NIM images are per model (nvcr.io/nim/<org>/<model>:<tag>): no default.
    image=None,
    image_note="NIM images are per model, e.g. nvcr.io/nim/meta/llama-3.1-8b-instruct:<tag>",
    args=(),
    # NIM reads its model, served name and port from the environment. NIM 2.x reads the
    # model folder from NIM_MODEL_PATH (reference/environment-variables); NIM 1.x read it
    # from NIM_MODEL_NAME ("Serving models from local assets"). Images are per model and
    # either major may be given, so both are set; each release ignores the other's name.
    env=(
        Env("NIM_MODEL_NAME", "{weights}"),
        Env("NIM_MODEL_PATH", "{weights}"),
        Env("NIM_SERVED_MODEL_NAME", "{served_name}"),
        Env("NIM_SERVER_PORT", "{port}"),
    ),
    ready_path="/v1/health/ready",
    live_path="/v1/health/live",
    # NIM serves its Prometheus metrics at /v1/metrics on the API port (observability).
    metrics=Metrics(
        queue="num_requests_waiting",
        kv=("gpu_cache_usage_perc",),
        ok="request_success_total",
        path="/v1/metrics",
    ),
    checkpoint="huggingface",
    drain=SleepDrain(),
    sources={
        "image": Source(f"{_DOCS}/{RELEASE}/get-started/configuration.html", RELEASE),
        "args": Source(f"{_DOCS}/{RELEASE}/reference/environment-variables.html", RELEASE),
        "env": Source(f"{_DOCS}/{RELEASE}/reference/environment-variables.html", RELEASE),
        "ports": Source(f"{_DOCS}/{RELEASE}/reference/environment-variables.html", RELEASE),
        "probes": Source(f"{_DOCS}/latest/api-reference.html", "latest, read 2026-12-02"),
        "metrics": Source(f"{_DOCS}/latest/observability.html", "latest, read 2026-12-02"),
        "drain": Source(f"{_DOCS}/latest/observability.html", "latest, read 2026-12-02"),
        "api_key": Source(f"{_DOCS}/{RELEASE}/reference/environment-variables.html", RELEASE),
    },
)
