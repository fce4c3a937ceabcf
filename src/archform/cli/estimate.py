"""`archform estimate BLUEPRINT`: serving fleets and training runs.

Fleets: memory fit, replicas for the traffic, GPUs and monthly cost. Training clusters: step
time, tokens/s per GPU, MFU, time and cost for a token budget.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

import typer

from archform.cli._core import check_number, fail, guarded


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command("estimate")(estimate)


def _estimate_one(
    fleet: Any, gpu: str | None, utilization: float, overhead: float, tokens_per_gpu: float | None
) -> dict[str, Any]:
    from archform.estimate import inference as inf
    from archform.estimate.prices import fleet_costs, load_prices

    if gpu is not None:
        fit = inf.memory_fit_for(
            fleet.model,
            inf.usable_gib(gpu, None),
            fleet.server.tensor_parallel,
            utilization,
            overhead,
        )
        gpu_name = gpu
    else:
        fit = inf.memory_fit(fleet, utilization, overhead)
        gpu_name = fleet.gpu_pool.gpu.model if fleet.gpu_pool.gpu else "unknown"
    cap = inf.capacity(fleet, knee_tokens_per_gpu=tokens_per_gpu)
    table = load_prices()
    return {
        "name": fleet.name,
        "gpu": gpu_name,
        "tensor_parallel": fleet.server.tensor_parallel,
        "regions": list(fleet.placement.all_regions),
        "memory": {
            "weights_gib": round(fit.weights_gib, 2),
            "kv_bytes_per_token": fit.kv_bytes_per_token,
            "kv_gib_at_max_context": round(fit.kv_gib_at_max_context, 2),
            "usable_gib_per_gpu": fit.usable_gib_per_gpu,
            "utilization": utilization,
            "runtime_overhead_gib_per_gpu": overhead,
            "budget_gib": round(fit.budget_gib, 2),
            "free_for_kv_gib": round(fit.free_for_kv_gib, 2),
            "max_kv_tokens": fit.max_kv_tokens,
            "max_context_tokens": fleet.model.max_context_tokens,
            "fits": fit.fits,
            "shape_assumed_from": fit.shape.assumed_from,
        },
        "capacity": None
        if cap is None
        else {
            **{k: (round(v, 2) if isinstance(v, float) else v) for k, v in asdict(cap).items()},
            "method": "Little's law: replicas = ceil(peak_rps / (C / W(C))); "
            "W(C) = T x decode step(C) + C x prefill; prefill compute-bound, decode "
            "memory-bound, calibrated on published vLLM figures "
            "(bench/RESULTS-estimate.md)",
        },
        "cost": {
            "prices_as_of": table.as_of.isoformat(),
            "prices_verified": table.verified,
            "price_sources": table.sources,
            "hours_per_month": table.hours_per_month,
            "purchase": fleet.gpu_pool.purchase,
            "at": [asdict(c) for c in fleet_costs(fleet, table)],
        },
    }


def training_json(cluster: Any, claimed: float | None = None) -> dict[str, Any]:
    """The training estimate of one TrainingCluster as plain data."""
    from archform.estimate import nccl, training, training_plan

    reason = training_plan.why_not(cluster)
    if reason is not None:
        return {"kind": "TrainingCluster", "name": cluster.name, "estimate": None, "why": reason}
    e = training_plan.estimate(cluster)
    s, p = e.step, e.parallelism
    claim = None
    if claimed is not None:
        mfu = training.implied_mfu(claimed, e.shape, p.sequence_length, e.gpus, e.peak_tflops)
        claim = {
            "tokens_per_s": claimed,
            "implied_mfu": round(mfu, 3),
            "impossible": mfu > 1.0,
            "estimate_over_claim": round(e.tokens_per_s / claimed, 3),
        }
    cannot_run = None
    if e.memory is not None and not e.memory.fits:
        cannot_run = (
            f"the training state needs {e.memory.total / 1e9:,.1f} GB per GPU of "
            f"{e.memory.gpu_bytes / 1e9:,.1f} GB (ZeRO stage {e.memory.stage}, TP "
            f"{p.tensor_parallel} x PP {p.pipeline_parallel}): the job stops with CUDA out of "
            "memory, so its step time, throughput and time for a token budget are what it "
            "would do if it fit (lint: TRN010)"
        )
    return {
        "kind": "TrainingCluster",
        "name": e.name,
        "runs": cannot_run is None,
        "cannot_run": cannot_run,
        "gpu": e.gpu,
        "gpus": e.gpus,
        "nodes": e.nodes,
        "fabric": {"kind": e.fabric, "gbps_per_node": e.gbps_per_node},
        "model": {
            "params": e.shape.params,
            "layers": e.shape.layers,
            "hidden_size": e.shape.hidden,
            "shape_assumed_from": e.shape_assumed_from,
        },
        "parallelism": {
            "framework": p.framework,
            "tensor_parallel": p.tensor_parallel,
            "pipeline_parallel": p.pipeline_parallel,
            "data_parallel": s.data_parallel,
            "context_parallel": p.context_parallel,
            "virtual_pipeline_stages": p.virtual_stages,
            "zero_stage": p.zero_stage,
            "precision": p.precision,
            "micro_batch_size": p.micro_batch,
            "micro_batches": s.micro_batches,
            "sequence_length": p.sequence_length,
            "global_batch_tokens": p.global_batch_tokens,
            "activation_checkpointing": p.recompute,
        },
        "step": {
            "compute_s": round(s.compute_s, 3),
            "pipeline_bubble_s": round(s.bubble_s, 3),
            "tensor_parallel_s": round(s.tp_s, 3),
            "data_parallel_sync_s": round(s.dp_sync_s, 3),
            "data_parallel_exposed_s": round(s.dp_exposed_s, 3),
            "data_parallel_busbw_gbytes": s.dp_busbw_gbytes,
            "data_parallel_algorithm": s.dp_algorithm,
            "data_parallel_collectives": [
                {
                    "collective": c.name,
                    "of": c.what,
                    "gbytes": round(c.gbytes, 3),
                    "seconds": round(c.seconds, 3),
                    "hidden_behind": c.overlaps,
                }
                for c in s.collectives
            ],
            "step_s": round(s.step_s, 3),
        },
        "memory_per_gpu": None
        if e.memory is None
        else {
            "zero_stage": e.memory.stage,
            "zero_stage_from": "blueprint"
            if cluster.training.zero_stage is not None
            else f"{p.framework} default",
            "model_states_gb": round(e.memory.states / 1e9, 2),
            "activations_gb": round(e.memory.activations / 1e9, 2),
            "activations_recompute": e.memory.recompute,
            "total_gb": round(e.memory.total / 1e9, 2),
            "gpu_gb": round(e.memory.gpu_bytes / 1e9, 2),
            "fits": e.memory.fits,
        },
        "tokens_per_s_per_gpu": round(s.tokens_per_s_per_gpu, 1),
        "tokens_per_s": round(e.tokens_per_s, 0),
        "model_flops_per_token": s.model_flops_per_token,
        "peak_tflops_per_gpu": e.peak_tflops,
        "mfu": round(s.mfu, 4),
        "impossible": s.impossible,
        "claim": claim,
        "cost": {
            "usd_per_hour": e.usd_per_hour,
            "missing": e.price_missing,
            "token_budget": e.token_budget,
            "hours_for_budget": None
            if e.hours_for_budget is None
            else round(e.hours_for_budget, 1),
            "usd_for_budget": e.usd_for_budget,
        },
        "method": "step = compute x (1 + (interleaved) 1F1B bubble) + tensor-parallel "
        "all-reduces + exposed data-parallel collectives by ZeRO stage (NCCL ring/tree busbw, "
        "efficiency "
        f"{nccl.efficiency()}); calibrated on Megatron-LM, torchtitan and Llama 3 figures "
        "(bench/RESULTS-training.md)",
    }


def _training_text(e: dict[str, Any]) -> list[str]:
    if e.get("estimate", True) is None:
        return [f"{e['name']}: no training estimate ({e['why']})"]
    m, p, s, c = e["model"], e["parallelism"], e["step"], e["cost"]
    lines = [
        f"{e['name']}: {e['gpus']} x {e['gpu']} on {e['nodes']} nodes, {e['fabric']['kind']} "
        f"{e['fabric']['gbps_per_node']:,} Gbps per node",
        f"  model                 {m['params'] / 1e9:g}B params, {m['layers']} layers x "
        f"{m['hidden_size']}"
        + (f" (shape assumed from {m['shape_assumed_from']})" if m["shape_assumed_from"] else ""),
        f"  parallelism           {p['framework']} ({p['precision']}, ZeRO stage "
        f"{p['zero_stage']}): TP {p['tensor_parallel']} x PP {p['pipeline_parallel']}"
        + (f" (v {p['virtual_pipeline_stages']})" if p["virtual_pipeline_stages"] > 1 else "")
        + (f" x CP {p['context_parallel']}" if p["context_parallel"] > 1 else "")
        + f" x DP {p['data_parallel']}, {p['global_batch_tokens']:,.0f} "
        f"tokens per step of {p['sequence_length']:,}-token sequences",
        f"  step                  {s['step_s']:.2f} s = compute {s['compute_s']:.2f} + bubble "
        f"{s['pipeline_bubble_s']:.2f} + TP {s['tensor_parallel_s']:.2f} + exposed gradient sync "
        f"{s['data_parallel_exposed_s']:.2f} (sync {s['data_parallel_sync_s']:.2f} s at "
        f"{s['data_parallel_busbw_gbytes']} GB/s {s['data_parallel_algorithm']})",
    ]
    if e.get("cannot_run"):
        lines.append(f"  CANNOT RUN            {e['cannot_run']}")
        lines.append(
            f"  throughput            not reachable as declared ({e['tokens_per_s_per_gpu']:,.0f} "
            f"tokens/s per GPU, MFU {e['mfu']:.1%}, only if the state fit)"
        )
    elif e["impossible"]:
        lines.append(
            f"  throughput            IMPOSSIBLE: {e['tokens_per_s_per_gpu']:,.0f} tokens/s per "
            f"GPU would be MFU {e['mfu']:.0%}, above the GPUs' {e['peak_tflops_per_gpu']:g} "
            "TFLOPS peak (check the inputs)"
        )
    else:
        lines.append(
            f"  throughput            {e['tokens_per_s_per_gpu']:,.0f} tokens/s per GPU, "
            f"{e['tokens_per_s']:,.0f} tokens/s in all, MFU {e['mfu']:.1%}"
        )
    mem = e["memory_per_gpu"]
    if mem is not None:
        verdict = "fits" if mem["fits"] else "DOES NOT FIT"
        lines.append(
            f"  memory per GPU        {mem['total_gb']:,.1f} GB = {mem['model_states_gb']:,.1f} "
            f"GB weights, gradients and Adam state (ZeRO stage {mem['zero_stage']}, "
            f"{mem['zero_stage_from']}) + "
            f"{mem['activations_gb']:,.1f} GB activations ({mem['activations_recompute']}"
            f"), of {mem['gpu_gb']:,.1f} GB: {verdict}"
        )
    claim = e["claim"]
    if claim is not None and claim["impossible"]:
        lines.append(
            f"  claimed throughput    IMPOSSIBLE: it needs {claim['implied_mfu']:.1f}x the GPUs' "
            f"dense peak ({e['peak_tflops_per_gpu']:g} TFLOPS x {e['gpus']} at "
            f"{e['model_flops_per_token']:.3g} FLOPs per token); the estimate above stands"
        )
    elif claim is not None:
        lines.append(
            f"  claimed throughput    {claim['tokens_per_s']:,.0f} tokens/s needs MFU "
            f"{claim['implied_mfu']:.1%}; the estimate is {claim['estimate_over_claim']:.2f}x it"
        )
    if c["usd_per_hour"] is None:
        lines.append(f"  cost                  {c['missing']}")
    else:
        lines.append(f"  cost                  ${c['usd_per_hour']:,.2f}/h (list price)")
    if c["hours_for_budget"] is not None:
        money = "" if c["usd_for_budget"] is None else f", ${c['usd_for_budget']:,.0f}"
        lines.append(
            f"  token budget          {c['token_budget']:,.0f} tokens: "
            f"{c['hours_for_budget']:,.1f} h{money}"
            + (" (only if the state fit: it cannot run as declared)" if e.get("cannot_run") else "")
        )
    return lines


def _text(e: dict[str, Any]) -> list[str]:
    m, c, cost = e["memory"], e["capacity"], e["cost"]
    lines = [
        f"{e['name']}: {e['tensor_parallel']} x {e['gpu']} per replica, "
        f"regions {', '.join(e['regions'])}",
        "  memory per replica:",
        f"    weights               {m['weights_gib']:.2f} GiB",
        f"    KV cache per token    {m['kv_bytes_per_token'] / 1024:.0f} KiB"
        + (f" (shape assumed from {m['shape_assumed_from']})" if m["shape_assumed_from"] else ""),
        f"    budget                {m['usable_gib_per_gpu']} GiB usable x {e['tensor_parallel']} "
        f"x {m['utilization']} = {m['budget_gib']:.2f} GiB",
        f"    free for KV           {m['free_for_kv_gib']:.2f} GiB "
        f"(after {m['runtime_overhead_gib_per_gpu']} GiB runtime per GPU) "
        f"= {m['max_kv_tokens']:,} tokens",
        f"    one {m['max_context_tokens']:,}-token sequence: "
        f"{m['kv_gib_at_max_context']:.2f} GiB KV -> "
        + ("fits" if m["fits"] else "DOES NOT FIT (cap max_context_tokens or add GPUs)"),
    ]
    if c is None:
        lines.append("  traffic: not declared (no replica sizing)")
    else:
        lines += [
            "  replicas for the traffic:",
            f"    assumption            {c['tokens_per_gpu_knee']:.0f} tok/s per GPU at the knee "
            f"({c['tokens_per_replica_knee']:,.0f} tok/s per replica of {c['replica_gpus']} "
            f"GPUs); one stream decodes at {c['tokens_per_stream']:.0f} tok/s on a replica "
            f"({c['assumption']}; override with --tokens-per-gpu)",
            f"    prefill               {c['prompt_tokens']:,} prompt tokens: "
            f"{c['prefill_ms']:.0f} ms per request, TTFT ~{c['ttft_ms']:.0f} ms; decode "
            f"{c['decode_bound']}-bound",
            f"    per replica           concurrency {c['concurrency_per_replica']}, latency "
            f"{c['latency_ms']:.0f} ms, p99 ~{c['p99_ms']:.0f} ms, "
            f"{c['rps_per_replica']:.2f} req/s",
            f"    needed                {c['replicas_needed_total']} replicas in total, "
            f"{c['replicas_needed_per_region']} per region ({c['nodes_needed_per_region']} nodes)",
            f"    pool maximum          {c['replicas_max_per_region']} replicas per region "
            f"({c['nodes_max_per_region']} nodes) -> "
            + ("enough" if c["enough"] else "NOT ENOUGH for the peak at the p99 target"),
        ]
    lines.append(
        f"  GPUs and cost ({cost['purchase']}; list prices as of {cost['prices_as_of']} "
        f"per region, {cost['hours_per_month']} h/month; sources: `archform estimate "
        "--format json` price_sources):"
    )
    for at in cost["at"]:
        unpriced = "no price for " + ", ".join(at["missing"])
        if at["usd_per_month"] is None:
            money = unpriced
        else:
            money = f"${at['usd_per_hour']:,.2f}/h, ${at['usd_per_month']:,.0f}/month"
            if at["missing"]:
                money = f"at least {money} ({unpriced})"
        lines.append(
            f"    at {at['label']:3}  {at['gpu_nodes']} GPU nodes "
            f"({at['spot_nodes']} spot), {at['gpus']} GPUs: {money}"
        )
    return lines


def estimate(
    files: Annotated[
        list[Path],
        typer.Argument(help="Blueprint files with InferenceFleet or TrainingCluster documents."),
    ],
    fmt: Annotated[str, typer.Option("--format", help="text or json")] = "text",
    tokens_per_gpu: Annotated[
        float | None,
        typer.Option(
            "--tokens-per-gpu", help="Override the per-GPU tokens/s at the knee (batch ~32)."
        ),
    ] = None,
    utilization: Annotated[
        float,
        typer.Option("--utilization", help="vLLM gpu_memory_utilization (fraction of GPU memory)."),
    ] = 0.9,
    gpu: Annotated[
        str | None, typer.Option("--gpu", help="Size for this GPU model instead (e.g. L4).")
    ] = None,
    overhead_gib: Annotated[
        float, typer.Option("--overhead-gib", help="Runtime memory per GPU outside weights and KV.")
    ] = 0.83,
    claimed_tokens_per_s: Annotated[
        float | None,
        typer.Option(
            "--claimed-tokens-per-s",
            help="Training: check a quoted cluster throughput against the GPUs' peak.",
        ),
    ] = None,
) -> None:
    """Size an inference fleet (weights + KV, replicas, cost) or a training run (step, MFU)."""
    from archform.spec import InferenceFleet, load_paths
    from archform.spec.models.training import TrainingCluster

    def run() -> None:
        if fmt not in ("text", "json"):
            fail(f"unknown format {fmt!r}", "use text or json")
        check_number("--utilization", utilization, 0.05, 1.0, "0.92")
        check_number("--overhead-gib", overhead_gib, 0.0, 1024.0, "0.83")
        if tokens_per_gpu is not None:
            check_number("--tokens-per-gpu", tokens_per_gpu, 1e-3, 1e7, "2500")
        if gpu is not None:
            from archform.estimate.inference import USABLE_GIB
            from archform.spec.catalog import load_catalog

            if gpu not in USABLE_GIB and load_catalog().gpu(gpu) is None:
                known = ", ".join(sorted(load_catalog().gpus))
                fail(f"unknown GPU model {gpu!r}", f"one of {known}")
        blueprints = load_paths(files)
        fleets = [d.model for d in blueprints.of_kind(InferenceFleet)]
        clusters = [d.model for d in blueprints.of_kind(TrainingCluster)]
        if not fleets and not clusters:
            fail(
                "no InferenceFleet or TrainingCluster in the given blueprints",
                "estimate sizes serving fleets and training runs",
            )
        results = [_estimate_one(f, gpu, utilization, overhead_gib, tokens_per_gpu) for f in fleets]
        if claimed_tokens_per_s is not None:
            check_number("--claimed-tokens-per-s", claimed_tokens_per_s, 1e-3, 1e12, "100000")
        results += [training_json(c, claimed_tokens_per_s) for c in clusters]
        if fmt == "json":
            typer.echo(json.dumps(results, indent=2, allow_nan=False))
        else:
            for i, r in enumerate(results):
                if i:
                    typer.echo("")
                text = _training_text(r) if r.get("kind") == "TrainingCluster" else _text(r)
                typer.echo("\n".join(text))

    guarded(run)
