"""SGLang (https://github.com/sgl-project/sglang): `python3 -m sglang.launch_server`."""

from __future__ import annotations

from archform.spec.engines.record import Engine, Env, GaugeDrain, Metrics, Source

# The commit of sgl-project/sglang the metric names were read at, and the server-arguments
# page the flags were read in.
COMMIT = "00ae9c1590d2d0bb6c0bfff39e312c34ae3dd538"
_TREE = f"https://github.com/sgl-project/sglang/blob/{COMMIT}"
_ARGS = "https://docs.sglang.io/advanced_features/server_arguments.html"
_READ = "docs read 2026-12-02"

ENGINE = Engine(
    kind="sglang",
    # SGLang's images (lmsysorg/sglang) are tagged per release and CUDA version; archform
    # records no registry digest for one, so the blueprint pins its own.
    image=None,
    image_note="pin an SGLang release image (a lmsysorg/sglang tag, not :latest), "
    "see https://hub.docker.com/r/lmsysorg/sglang/tags",
    args=(
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "{weights}",
        "--served-model-name",
        "{served_name}",
        "--tp-size",
        "{tensor_parallel}",
        "--context-length",
        "{max_context}",
        # SGLang listens on 127.0.0.1 unless told otherwise (--host default).
        "--host",
        "0.0.0.0",
        "--port",
        "{port}",
        # /metrics exists only with --enable-metrics.
        "--enable-metrics",
        # Run at most the estimate's per-replica concurrency; beyond it SGLang queues
        # (sglang:num_queue_reqs), which the autoscaler counts.
        "--max-running-requests",
        "{max_num_seqs}",
    ),
    env=(Env("HF_HUB_OFFLINE", "1"), Env("TRANSFORMERS_OFFLINE", "1")),
    # The HTTP server starts once the scheduler has loaded the model; /v1/models lists the
    # served model, /health answers while the server is up.
    ready_path="/v1/models",
    live_path="/health",
    metrics=Metrics(
        queue="sglang:num_queue_reqs",
        running="sglang:num_running_reqs",
        # The fraction of the KV-cache token pool in use.
        kv=("sglang:token_usage",),
        ok="sglang:num_requests_total",
    ),
    # Wait for the requests in flight before SIGTERM, on SGLang's own gauges (the image
    # ships Python: SGLang is a Python package).
    checkpoint="huggingface",
    drain=GaugeDrain(gauges=("sglang:num_running_reqs", "sglang:num_queue_reqs")),
    sources={
        "image": Source("https://hub.docker.com/r/lmsysorg/sglang/tags", _READ),
        "args": Source(_ARGS, _READ),
        "env": Source(
            "https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables",
            "huggingface_hub docs",
        ),
        "ports": Source(_ARGS, _READ),
        "probes": Source(f"{_TREE}/python/sglang/srt/entrypoints/http_server.py", COMMIT),
        "metrics": Source(f"{_TREE}/python/sglang/srt/metrics/collector.py", COMMIT),
        "drain": Source(f"{_TREE}/python/sglang/srt/metrics/collector.py", COMMIT),
        "api_key": Source(_ARGS, _READ),
    },
)
