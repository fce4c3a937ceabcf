"""NVIDIA NIM for LLMs (https://docs.nvidia.com/nim/large-language-models/latest/)."""

from __future__ import annotations

from archform.spec.engines.record import Engine, Env, Metrics, SleepDrain, Source

_DOCS = "https://docs.nvidia.com/nim/large-language-models/latest"

ENGINE = Engine(
    kind="nim",
    # NIM images are per model (nvcr.io/nim/<org>/<model>:<tag>): no default.
    image=None,
    image_note="NIM images are per model, e.g. nvcr.io/nim/meta/llama-3.1-8b-instruct:<tag>",
    args=(),
    # NIM reads its model, served name and port from the environment (configuration.html).
    env=(
        Env("NIM_MODEL_NAME", "{weights}"),
        Env("NIM_SERVED_MODEL_NAME", "{served_name}"),
        Env("NIM_SERVER_PORT", "{port}"),
    ),
    ready_path="/v1/health/ready",
    live_path="/v1/health/live",
    metrics=Metrics(
        queue="num_requests_waiting",
        kv=("gpu_cache_usage_perc",),
        ok="request_success_total",
    ),
    drain=SleepDrain(),
    sources={
        "image": Source(f"{_DOCS}/getting-started.html", "latest"),
        "args": Source(f"{_DOCS}/configuration.html", "latest"),
        "env": Source(f"{_DOCS}/configuration.html", "latest"),
        "ports": Source(f"{_DOCS}/configuration.html", "latest"),
        "probes": Source(f"{_DOCS}/api-reference.html", "latest"),
        "metrics": Source(f"{_DOCS}/observability.html", "latest"),
        "drain": Source(f"{_DOCS}/observability.html", "latest"),
        "api_key": Source(f"{_DOCS}/configuration.html", "latest"),
    },
)
