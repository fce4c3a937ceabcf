"""Serving under load and change, on every fleet case's generated objects.

- vLLM runs at most the estimate's per-replica concurrency (`--max-num-seqs`), and KEDA
  scales on requests in flight (running + waiting) at that batch plus the queue target,
  with a fallback that keeps the peak capacity when Prometheus cannot be read;
- a terminating pod drains: preStop waits until vLLM's running/waiting gauges reach 0, for
  at most the p99 budget, and the grace period covers preStop plus shutdown. The drain
  script is run here against an HTTP server that serves Prometheus text exposition the
  way vLLM's /metrics does (a stand-in: no GPU here to run vLLM; metric names from
  https://github.com/vllm-project/vllm/blob/main/vllm/v1/metrics/loggers.py).
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest
import yaml

from archform.estimate.inference import capacity
from archform.render.generate import build_files
from archform.render.targets.kubernetes.server import pre_stop
from archform.spec.engines import engine
from support.fleet_cases import Case, fleet_cases

CASES = fleet_cases()


def _objects(case: Case) -> tuple[Any, dict[str, list[dict[str, Any]]]]:
    fleet, blueprints = case.load()
    found: dict[str, list[dict[str, Any]]] = {}
    for f in build_files(blueprints):  # type: ignore[arg-type]
        if f.path.startswith("kubernetes/"):
            obj = yaml.safe_load(f.content)
            found.setdefault(obj["kind"], []).append(obj)
    return fleet, found


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_batch_size_autoscaler_and_estimate_agree(case: Case) -> None:
    fleet, objs = _objects(case)
    cap = capacity(fleet)
    assert cap is not None
    for dep in objs["Deployment"]:
        args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
        seqs = int(args[args.index("--max-num-seqs") + 1])
        assert seqs == cap.concurrency_per_replica
    assert fleet.autoscaling is not None
    for so in objs["ScaledObject"]:
        trigger = so["spec"]["triggers"][0]
        query = trigger["metadata"]["query"]
        assert "vllm:num_requests_running" in query and "vllm:num_requests_waiting" in query
        assert trigger["metricType"] == "AverageValue"
        assert float(trigger["metadata"]["threshold"]) == seqs + fleet.autoscaling.target
        fallback = so["spec"]["fallback"]
        assert fallback["failureThreshold"] >= 1
        lo, hi = so["spec"]["minReplicaCount"], so["spec"]["maxReplicaCount"]
        assert lo <= fallback["replicas"] <= hi
        assert fallback["replicas"] == min(hi, max(lo, cap.replicas_needed_per_region))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_grace_period_covers_the_p99_drain_and_shutdown(case: Case) -> None:
    fleet, objs = _objects(case)
    p99_s = (fleet.traffic.p99_latency_ms if fleet.traffic else 30_000) / 1000
    for dep in objs["Deployment"]:
        pod = dep["spec"]["template"]["spec"]
        hook = pod["containers"][0]["lifecycle"]["preStop"]["exec"]["command"]
        assert hook[:2] == ["python3", "-c"]
        assert "vllm:num_requests_" in hook[2]
        budget = int(hook[2].split("time.monotonic() + ", 1)[1].split("\n", 1)[0])
        assert budget >= p99_s
        # SIGTERM follows preStop; vLLM then needs time to exit before SIGKILL.
        assert pod["terminationGracePeriodSeconds"] >= budget + 15


class _Metrics(BaseHTTPRequestHandler):
    running: ClassVar[list[float]] = []
    polls: ClassVar[list[float]] = []

    def do_GET(self) -> None:
        value = self.running.pop(0) if len(self.running) > 1 else self.running[0]
        self.polls.append(value)
        body = (
            "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
            "# TYPE vllm:num_requests_running gauge\n"
            f'vllm:num_requests_running{{engine="0",model_name="m"}} {value}\n'
            "# TYPE vllm:num_requests_waiting gauge\n"
            'vllm:num_requests_waiting{engine="0",model_name="m"} 0.0\n'
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def metrics() -> Iterator[tuple[int, type[_Metrics]]]:
    handler = type("Handler", (_Metrics,), {"running": [], "polls": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _hook(port: int, budget: int) -> list[str]:
    return pre_stop(engine("vllm"), port, budget)


def test_drain_waits_for_requests_in_flight_then_returns(
    metrics: tuple[int, type[_Metrics]],
) -> None:
    port, handler = metrics
    handler.running = [3.0, 2.0, 1.0, 0.0]
    start = time.monotonic()
    hook = _hook(port, 30)
    proc = subprocess.run([sys.executable, *hook[1:]], timeout=60, capture_output=True)
    took = time.monotonic() - start
    assert proc.returncode == 0, proc.stderr
    assert handler.polls == [3.0, 2.0, 1.0, 0.0]
    assert 5 + 3 <= took < 20, took


def test_drain_gives_up_at_the_budget(metrics: tuple[int, type[_Metrics]]) -> None:
    port, handler = metrics
    handler.running = [1.0]  # a request that never finishes
    start = time.monotonic()
    hook = _hook(port, 9)
    proc = subprocess.run([sys.executable, *hook[1:]], timeout=60, capture_output=True)
    took = time.monotonic() - start
    assert proc.returncode == 0
    assert 9 <= took < 14, took
    assert len(handler.polls) >= 3
