"""Text Generation Inference (https://github.com/huggingface/text-generation-inference)."""

from __future__ import annotations

from archform.spec.engines.record import ApiKey, Engine, Env, Metrics, SleepDrain, Source

RELEASE = "v3.3.4"
_TREE = f"https://github.com/huggingface/text-generation-inference/blob/{RELEASE}"

ENGINE = Engine(
    kind="tgi",
    image="ghcr.io/huggingface/text-generation-inference:3.3.4",
    # text-generation-launcher's flags (launcher/src/main.rs, `struct Args`).
    args=(
        "--model-id",
        "{weights}",
        "--num-shard",
        "{tensor_parallel}",
        "--port",
        "{port}",
        "--max-total-tokens",
        "{max_context}",
    ),
    env=(Env("HF_HUB_OFFLINE", "1"), Env("TRANSFORMERS_OFFLINE", "1")),
    # The router serves HTTP only after the shards have loaded and warmed up; /health runs
    # the shards' health check, /info answers from the router (router/src/server.rs).
    ready_path="/health",
    live_path="/info",
    # The router also serves /metrics on its HTTP port (router/src/server.rs, `metrics`).
    metrics=Metrics(
        queue="tgi_queue_size",
        kv=("tgi_batch_current_size",),
        ok="tgi_request_success",
    ),
    checkpoint="huggingface",
    drain=SleepDrain(),
    # The launcher reads API_KEY (launcher/src/main.rs, `api_key`, clap `env`) and hands it
    # to the router, which then requires `Authorization: Bearer <key>` on the generation
    # routes only; /health, /info, /metrics and /v1/models stay open (router/src/server.rs,
    # base_routes vs info_routes).
    api_key=ApiKey(
        env="API_KEY",
        checkov_reason="TGI's launcher reads its API key from API_KEY or --api-key "
        "(launcher/src/main.rs); an argument in the manifest would show the key, so the "
        "Secret is passed as an environment variable",
        ready_needs_key=False,
    ),
    sources={
        "image": Source(
            f"https://github.com/huggingface/text-generation-inference/releases/tag/{RELEASE}",
            RELEASE,
        ),
        "args": Source(f"{_TREE}/launcher/src/main.rs", RELEASE),
        "env": Source(
            "https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables",
            "huggingface_hub docs",
        ),
        "ports": Source(f"{_TREE}/launcher/src/main.rs", RELEASE),
        "probes": Source(f"{_TREE}/router/src/server.rs", RELEASE),
        "metrics": Source(f"{_TREE}/router/src/server.rs", RELEASE),
        "drain": Source(f"{_TREE}/router/src/server.rs", RELEASE),
        "api_key": Source(f"{_TREE}/launcher/src/main.rs", RELEASE),
    },
)
