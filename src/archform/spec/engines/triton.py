"""NVIDIA Triton Inference Server (https://github.com/triton-inference-server/server)."""

from __future__ import annotations

from archform.spec.engines.record import Engine, Metrics, SleepDrain, Source

RELEASE = "25.03"
_DOCS = "https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs"

ENGINE = Engine(
    kind="triton",
    # The vLLM flavour of Triton (LLM serving); NGC ships it since 23.10.
    image=f"nvcr.io/nvidia/tritonserver:{RELEASE}-vllm-python-py3",
    args=(
        "tritonserver",
        "--model-repository={weights}",
        "--http-port={port}",
        "--metrics-port={metrics_port}",
    ),
    env=(),
    ready_path="/v2/health/ready",
    live_path="/v2/health/live",
    # Triton serves /metrics on its own port, 8002 by default (user_guide/metrics.md).
    metrics=Metrics(
        queue="nv_inference_pending_request_count",
        kv=("nv_inference_pending_request_count",),
        ok="nv_inference_request_success",
        port=8002,
    ),
    drain=SleepDrain(),
    sources={
        "image": Source(
            "https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/"
            "rel-25-03.html",
            RELEASE,
        ),
        "args": Source(f"{_DOCS}/getting_started/quickstart.html", RELEASE),
        "env": Source(f"{_DOCS}/getting_started/quickstart.html", RELEASE),
        "ports": Source(f"{_DOCS}/user_guide/metrics.html", RELEASE),
        "probes": Source(f"{_DOCS}/protocol/README.html", RELEASE),
        "metrics": Source(f"{_DOCS}/user_guide/metrics.html", RELEASE),
        "drain": Source(f"{_DOCS}/user_guide/metrics.html", RELEASE),
        "api_key": Source(f"{_DOCS}/customization_guide/inference_protocols.html", RELEASE),
    },
)
