"""Every rendered Kubernetes object passes kubernetes-validate --strict for the declared version."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import support
from archform.render.generate import build_files
from archform.render.targets.fleet.target import fleet_data
from archform.render.targets.kubernetes.objects import fleet_objects
from support.fleet_cases import fleet_cases

CASES = fleet_cases()


def _validate(obj: dict, version: str) -> str | None:
    support.require_module("kubernetes_validate", "jsonschema")
    from archform.verify.checks.kubernetes import validate_object

    return validate_object(obj, version)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_object_passes_strict_validation(case) -> None:
    fleet, _ = case.load()
    view = fleet_data(fleet)
    objects = fleet_objects(view)
    assert set(objects) == set(fleet.placement.all_regions)
    kinds = set()
    for objs in objects.values():
        for obj in objs:
            kinds.add(obj["kind"])
            assert _validate(obj, fleet.kubernetes.version) is None
    assert {"Namespace", "Deployment", "Service", "PodDisruptionBudget", "ScaledObject"} <= kinds


def _deployment() -> tuple[dict, str]:
    fleet, _ = CASES[0].load()
    objs = next(iter(fleet_objects(fleet_data(fleet)).values()))
    dep = next(o for o in objs if o["kind"] == "Deployment")
    return copy.deepcopy(dep), fleet.kubernetes.version


def _scaled_object() -> dict:
    fleet, _ = CASES[0].load()
    objs = next(iter(fleet_objects(fleet_data(fleet)).values()))
    return copy.deepcopy(next(o for o in objs if o["kind"] == "ScaledObject"))


def test_unknown_field_fails_in_strict_mode() -> None:
    dep, version = _deployment()
    dep["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    problem = _validate(dep, version)
    assert problem and "readinesProbe" in problem


def test_wrong_type_fails() -> None:
    dep, version = _deployment()
    dep["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "two minutes"
    assert "terminationGracePeriodSeconds" in (_validate(dep, version) or "")


def test_missing_schema_is_a_failure_not_a_warning() -> None:
    pdb = {
        "apiVersion": "policy/v1beta1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "x"},
        "spec": {"maxUnavailable": 1},
    }
    assert "no schema" in (_validate(pdb, "1.30") or "")
    crd = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "x"}}
    assert "no schema" in (_validate(crd, "1.30") or "")


def test_scaled_object_schema_is_strict() -> None:
    so = _scaled_object()
    assert _validate(so, "1.30") is None
    so["spec"]["maxReplicas"] = 3
    assert "maxReplicas" in (_validate(so, "1.30") or "")
    so = _scaled_object()
    so["spec"]["triggers"][0]["metricType"] = "Average"
    assert _validate(so, "1.30")


def test_unsupported_kubernetes_version_fails() -> None:
    dep, _ = _deployment()
    assert "outside" in (_validate(dep, "1.21") or "")


def _write(case, root: Path) -> Path:
    _, blueprints = case.load()
    for f in build_files(blueprints):
        path = root / f.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f.content)
    return root


def test_verify_check_passes_generated_tree_and_fails_tampered_one(tmp_path: Path) -> None:
    support.require_module("kubernetes_validate")
    from archform.verify import verify_tree

    root = _write(CASES[0], tmp_path / "out")
    results = [r for r in verify_tree(root) if r.check == "kubernetes-validate"]
    manifests = sorted(root.glob("kubernetes/*/*.yaml"))
    assert len(results) == len(manifests) > 0
    assert all(r.status == "passed" for r in results), results
    pdb = next(p for p in manifests if "poddisruptionbudget" in p.name)
    pdb.write_text(pdb.read_text().replace("apiVersion: policy/v1", "apiVersion: policy/v1beta1"))
    # (the policy pack's results report the open plan invariants of issue 12, not manifests)
    failed = [r for r in verify_tree(root) if r.status == "failed" and r.check != "policy"]
    assert [r.artifact for r in failed] == [pdb.relative_to(root).as_posix()]
    assert "no schema" in failed[0].detail


def test_generate_then_verify_via_the_cli(tmp_path: Path) -> None:
    support.require_module("kubernetes_validate")
    out = tmp_path / "out"
    gen = support.run_cli(
        ["generate", str(support.BLUEPRINTS / "platform-two-tier.yaml"), "-o", str(out)]
    )
    assert gen.returncode == 0, gen.stderr
    assert (out / "sivaro-serve" / "pulumi" / "__main__.py").is_file()
    # verify runs the three Pulumi programs and the slurmctld check: minutes on a busy machine
    ver = support.run_cli(["verify", str(out), "--format", "json"], timeout=900)
    results = [r for r in json.loads(ver.stdout) if r["check"] == "kubernetes-validate"]
    # per region: namespace, 2 service accounts, 3 NetworkPolicies, stage Job, Deployment,
    # Service, PodDisruptionBudget, ScaledObject
    assert len(results) == 3 * 11
    assert sum("-job-stage-" in r["artifact"] for r in results) == 3
    assert {r["status"] for r in results} == {"passed"}


def test_help_and_estimate_do_not_import_heavy_packages() -> None:
    code = (
        "import sys; from archform.cli import app\n"
        "try:\n    app(['estimate', '--help'], standalone_mode=False)\n"
        "except SystemExit:\n    pass\n"
        "heavy = [m for m in ('pulumi', 'kubernetes_validate', 'ansible')\n"
        "         if m in sys.modules]\n"
        "print('HEAVY=' + ','.join(heavy))"
    )
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(support.ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert proc.stdout.strip().splitlines()[-1] == "HEAVY="


READY = {
    "vllm": "/health",  # /v1/models needs the API key (edge.auth: api_key, the default)
    "tgi": "/health",
    "triton": "/v2/health/ready",
    "nim": "/v1/health/ready",
    "sglang": "/v1/models",
}


@pytest.mark.parametrize("kind", sorted(READY))
@pytest.mark.parametrize(
    "metric", ["queue_depth", "requests_per_second", "kv_cache_usage", "gpu_utilization"]
)
def test_every_server_kind_and_metric_renders_valid_objects(kind: str, metric: str) -> None:
    from ruamel.yaml import YAML

    from archform.spec import InferenceFleet, load_text
    from support.fleet_cases import GCP_FIXTURE, _dump

    raw = YAML(typ="safe", pure=True).load(GCP_FIXTURE.read_text("utf-8"))
    raw["server"]["kind"] = kind
    if kind not in ("vllm", "tgi"):
        raw["edge"] = {**raw.get("edge", {}), "auth": "none"}  # these read no API key
    raw["autoscaling"] = {"metric": metric, "target": 0.8 if metric != "queue_depth" else 8}
    fleet = load_text(_dump(raw)).of_kind(InferenceFleet)[0].model
    view = fleet_data(fleet)  # type: ignore[arg-type]
    for objs in fleet_objects(view).values():
        for obj in objs:
            assert _validate(obj, "1.30") is None
        dep = next(o for o in objs if o["kind"] == "Deployment")
        server = dep["spec"]["template"]["spec"]["containers"][0]
        assert server["readinessProbe"]["httpGet"]["path"] == READY[kind]
        assert server["startupProbe"]["httpGet"]["path"] == READY[kind]
        # vLLM with its API key has one unauthenticated path, /health, for all three probes
        # (its HTTP server starts only once the model is loaded).
        live = server["livenessProbe"]["httpGet"]["path"]
        assert live == "/health" if kind == "vllm" else live != READY[kind]
        scaler = next(o for o in objs if o["kind"] == "ScaledObject")
        trigger = scaler["spec"]["triggers"][0]
        assert trigger["metadata"]["query"].endswith(")")
        assert trigger["metricType"] == (
            "AverageValue" if metric in ("queue_depth", "requests_per_second") else "Value"
        )
        # vLLM's and SGLang's queue_depth count requests in flight: a full batch (the flag
        # capping running requests) + the target
        cap = {"vllm": "--max-num-seqs", "sglang": "--max-running-requests"}.get(kind)
        if metric == "queue_depth" and cap:
            args = server["args"]
            batch = int(args[args.index(cap) + 1])
            assert trigger["metadata"]["threshold"] == str(batch + 8)
        else:
            assert trigger["metadata"]["threshold"] == ("8" if metric == "queue_depth" else "0.8")


def test_kubernetes_check_skips_without_kubernetes_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    from archform.verify.checks import kubernetes as check

    root = _write(CASES[0], tmp_path / "out")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        check.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "kubernetes_validate" else real(name, *a),
    )
    results = check.CHECK.run(root)
    assert [r.status for r in results] == ["skipped"]
    assert "not installed" in results[0].detail
