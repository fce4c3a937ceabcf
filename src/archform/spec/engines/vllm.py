"""vLLM (https://github.com/vllm-project/vllm), the OpenAI-compatible server of `vllm serve`."""

from __future__ import annotations

from archform.spec.engines.record import ApiKey, Engine, Env, GaugeDrain, Metrics, Source

RELEASE = "v0.11.0"
_TREE = f"https://github.com/vllm-project/vllm/blob/{RELEASE}"

ENGINE = Engine(
    kind="vllm",
    # v0.11.0 images are built with CUDA 12.8 (runs on the R570 drivers archform installs).
    image=f"vllm/vllm-openai:{RELEASE}",
    args=(
        "--model",
        "{weights}",
        "--served-model-name",
        "{served_name}",
        "--tensor-parallel-size",
        "{tensor_parallel}",
        "--max-model-len",
        "{max_context}",
        "--port",
        "{port}",
        # Request logging is on by default before vllm-project/vllm#21739 (the bundled
        # blueprints pin v0.6.3); that change made it opt-in and deprecated this flag, and
        # #29402 removes it (v0.12): drop it once no supported image predates #21739.
        "--disable-log-requests",
        # Run at most the estimate's per-replica concurrency; beyond it vLLM queues
        # (vllm:num_requests_waiting), which the autoscaler counts.
        "--max-num-seqs",
        "{max_num_seqs}",
    ),
    # The weights are local: never reach the Hugging Face Hub (huggingface_hub and
    # transformers read these).
    env=(Env("HF_HUB_OFFLINE", "1"), Env("TRANSFORMERS_OFFLINE", "1")),
    # /v1/models lists the served model only once it is loaded (llm-d readiness guide);
    # /health answers while the engine is alive.
    ready_path="/v1/models",
    live_path="/health",
    metrics=Metrics(
        queue="vllm:num_requests_waiting",
        running="vllm:num_requests_running",
        # vLLM renamed gpu_cache_usage_perc to kv_cache_usage_perc (vLLM metrics doc); the
        # query takes whichever the pinned image exports (PromQL `a or b`).
        kv=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
        ok="vllm:request_success_total",
    ),
    # vLLM's SIGTERM handler cancels the HTTP server task, aborting requests in flight
    # (vllm/entrypoints/launcher.py, serve_http), so the drain happens before SIGTERM, in
    # preStop: wait until the server's own gauges of running and waiting requests
    # (vllm/v1/metrics/loggers.py) are both 0. The image ships Python (vLLM is a Python
    # package).
    checkpoint="huggingface",
    drain=GaugeDrain(gauges=("vllm:num_requests_running", "vllm:num_requests_waiting")),
    # vLLM reads VLLM_API_KEY or --api-key and then requires `Authorization: Bearer <key>`
    # on every path under /v1 (vllm/entrypoints/openai/api_server.py, `authentication`
    # middleware); --middleware adds an ASGI middleware by import path (cli_args.py).
    api_key=ApiKey(
        env="VLLM_API_KEY",
        checkov_reason="vLLM reads its API key only from VLLM_API_KEY or --api-key "
        "(vllm/entrypoints/openai/api_server.py); an argument would show in the process "
        "list, so the Secret is passed as an environment variable",
    ),
    middleware_arg="--middleware",
    sources={
        "image": Source(f"https://github.com/vllm-project/vllm/releases/tag/{RELEASE}", RELEASE),
        "args": Source(
            f"https://docs.vllm.ai/en/{RELEASE}/configuration/engine_args.html", RELEASE
        ),
        "env": Source(
            "https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables",
            "huggingface_hub docs",
        ),
        "ports": Source(f"{_TREE}/vllm/entrypoints/openai/cli_args.py", RELEASE),
        "probes": Source(f"{_TREE}/vllm/entrypoints/openai/api_server.py", RELEASE),
        "metrics": Source(f"{_TREE}/vllm/v1/metrics/loggers.py", RELEASE),
        "drain": Source(f"{_TREE}/vllm/entrypoints/launcher.py", RELEASE),
        "api_key": Source(f"{_TREE}/vllm/entrypoints/openai/api_server.py", RELEASE),
    },
)
