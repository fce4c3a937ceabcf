"""The first `archform deploy` of the bundled Platform on an empty registry, against moto.

The engine drives the real phase order of the Platform's plan (generate -> pulumi ->
ansible -> acceptance -> serve) with the real generate, pulumi and serve phases; only the
`pulumi up` itself is a stand-in (no Pulumi CLI or cloud here): it runs each generated
program under mocks with the real provider SDKs and the stack config the phase chose, and
creates in moto's S3 the buckets the program registered (what the registry stack's
`pulumi up` creates). The registry check talks to moto's standalone S3 server over HTTP
through boto3 (AWS_ENDPOINT_URL). The ansible and acceptance phases are recording
stand-ins: they need the training cluster's hosts.

On an empty registry the deploy must not fail: the fleet comes up as infrastructure only
(clusters, pools, identities; no stage Job or Deployment, which would fail on the missing
SHA256SUMS), and the deploy stops at the exact `archform promote` command. After a real
`archform promote` into moto, `--from serve` resumes and the fleet serves that version.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from promote_support import client, env, moto_server
from rich.console import Console

import support
from archform.deploy import build_plan, deploy
from archform.deploy.engine import default_runners
from archform.deploy.phases import Context, run_pulumi, run_serve
from archform.deploy.plan import PulumiProject
from archform.deploy.progress import Reporter
from archform.spec import load_paths

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"
REGIONS = ("us-east-1", "eu-west-1", "ap-northeast-1")


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    support.require_module("boto3", "moto", "pulumi", "pulumi_aws", "pulumi_kubernetes")
    with moto_server(tmp_path_factory.mktemp("moto") / "moto.log") as url:
        yield url


class Stacks:
    """The stand-in `pulumi up`: mocks + the real SDKs; S3 buckets become moto buckets."""

    def __init__(self, endpoint: str) -> None:
        self.s3 = client(endpoint)
        self.runs: dict[str, list[tuple[dict[str, str], Any]]] = {}

    def up(self, ctx: Context, project: PulumiProject, config: dict[str, str]) -> dict[str, Any]:
        from archform.verify.pulumi_mock import run_program
        from archform.verify.pulumi_projects import dry_run_config

        folder = ctx.plan.out_dir / project.path
        run = run_program(folder, {**dry_run_config(folder)[0], **config})
        self.runs.setdefault(project.document, []).append((config, run))
        have = {b["Name"] for b in self.s3.list_buckets().get("Buckets", [])}
        for bucket in run.of_type("aws:s3/bucket:Bucket") + run.of_type("aws:s3/bucketV2:BucketV2"):
            name = bucket.inputs.get("bucket")
            if name and name not in have:
                self.s3.create_bucket(Bucket=name)
        return dict(run.outputs)

    def last(self, document: str) -> tuple[dict[str, str], Any]:
        return self.runs[document][-1]


def _runners(stacks: Stacks, calls: list[str]) -> dict[str, Callable[[Context], None]]:
    real = default_runners()

    def record(phase: str) -> Callable[[Context], None]:
        return lambda ctx: calls.append(phase)

    return {
        "generate": real["generate"],
        "pulumi": partial(run_pulumi, up=stacks.up),
        "ansible": record("ansible"),
        "acceptance": record("acceptance"),
        "serve": partial(run_serve, up=stacks.up),
    }


def _environment(monkeypatch: pytest.MonkeyPatch, endpoint: str, tmp: Path) -> None:
    """moto's endpoint and credentials; a `pulumi` on PATH for the engine's preflight that
    fails if anything runs it (the stand-in `up` replaces the CLI)."""
    for key, value in env(endpoint).items():
        monkeypatch.setenv(key, value)
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "pulumi"
    fake.write_text("#!/bin/sh\necho 'the pulumi CLI must not run here' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")


def _context(out: Path) -> tuple[Context, Console]:
    loaded = load_paths([PLATFORM])
    docs = list(loaded.documents)
    console = Console(record=True, width=200, force_terminal=False)
    return Context(build_plan(loaded, docs, out), loaded, docs, Reporter(console, None)), console


def _state(out: Path) -> dict[str, str]:
    return dict(json.loads((out / ".archform-deploy" / "state.json").read_text())["phases"])


def _checkpoint(root: Path) -> Path:
    """A small Hugging Face style checkpoint of the blueprint's shape (40 layers, 40 KV heads
    of 128): config, tokenizer and one safetensors file with a valid header."""
    ckpt = root / "ckpt" / "step-000100"
    ckpt.mkdir(parents=True)
    (ckpt / "config.json").write_text(
        json.dumps(
            {
                "architectures": ["LlamaForCausalLM"],
                "num_hidden_layers": 40,
                "num_attention_heads": 40,
                "num_key_value_heads": 40,
                "hidden_size": 5120,
                "head_dim": 128,
            }
        )
    )
    (ckpt / "tokenizer.json").write_text('{"version": "1.0", "model": {"type": "BPE"}}')
    (ckpt / "tokenizer_config.json").write_text('{"model_max_length": 8192}')
    data = bytes(range(256)) * 16
    header = json.dumps(
        {"lm_head.weight": {"dtype": "BF16", "shape": [16, 128], "data_offsets": [0, len(data)]}}
    ).encode()
    (ckpt / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + data)
    return ckpt


def test_empty_registry_deploys_infrastructure_then_stops_at_promote(
    tmp_path: Path, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _environment(monkeypatch, endpoint, tmp_path)
    out = tmp_path / "sivaro"
    ctx, console = _context(out)
    assert ctx.plan.phases == ("generate", "pulumi", "ansible", "acceptance", "serve")
    stacks, calls = Stacks(endpoint), []

    waiting = deploy(ctx, runners=_runners(stacks, calls))

    # did not fail, and names the exact promote command
    config = out / "sivaro" / "promote" / "promote.json"
    command = (
        f"archform promote {config} --checkpoint CHECKPOINT_DIR --version VERSION "
        "--run-id RUN_ID --approve"
    )
    assert waiting is not None and command in waiting, waiting
    assert command in " ".join(console.export_text(clear=False).split())
    assert _state(out) == {
        "generate": "done",
        "pulumi": "done",
        "ansible": "done",
        "acceptance": "done",
        "serve": "waiting",
    }
    assert calls == ["ansible", "acceptance"], "the training tier is bootstrapped regardless"
    # the registry exists (created by the registry stack) and is empty
    assert client(endpoint).list_objects_v2(Bucket="sivaro-models").get("KeyCount") == 0
    # the fleet: infrastructure in every region, no serving objects
    fleet_config, fleet = stacks.last("sivaro-serve")
    assert fleet_config == {"serve": "false"}
    assert len(fleet.of_type("aws:eks/cluster:Cluster")) == len(REGIONS)
    assert fleet.of_type("aws:eks/nodeGroup:NodeGroup")
    assert not fleet.of_type("kubernetes:batch/v1:Job")
    assert not fleet.of_type("kubernetes:apps/v1:Deployment")
    assert fleet.outputs["serving"]["state"] == "infrastructure-only"
    assert fleet.outputs["endpoints"] == {}

    # promote (the real CLI, into moto), then resume at serve
    ckpt = _checkpoint(tmp_path)
    proc = support.run_cli(
        [
            "promote",
            str(config),
            "--checkpoint",
            str(ckpt),
            "--version",
            "v100",
            "--run-id",
            "run-1",
            "--approve",
        ],
        env=env(endpoint),
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert deploy(ctx, start="serve", runners=_runners(stacks, calls)) is None
    assert _state(out)["serve"] == "done"
    serve_config, serving = stacks.last("sivaro-serve")
    assert serve_config == {"serve": "true"}
    served = {
        d.name.split("-deployment-")[0]: d.inputs["spec"]["template"]["metadata"]["annotations"][
            "archform.io/model-version"
        ]
        for d in serving.of_type("kubernetes:apps/v1:Deployment")
    }
    assert served == dict.fromkeys(REGIONS, "v100")
    assert serving.outputs["serving"] == {
        "state": "serving",
        "version": "v100",
        "source": "s3://sivaro-models/sivaro-13b/v100/",
    }


def test_a_serving_fleet_is_never_switched_back_to_infrastructure_only(
    tmp_path: Path, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet whose saved outputs say it serves, with its release gone from the registry:
    the pulumi phase refuses instead of deleting the Deployments."""
    _environment(monkeypatch, endpoint, tmp_path)
    out = tmp_path / "sivaro"
    ctx, console = _context(out)
    from archform.render.generate import generate

    generate(load_paths([PLATFORM]), out)  # a tree deployed before
    saved = out / ".archform-deploy" / "outputs" / "sivaro-serve-fleet.json"
    saved.parent.mkdir(parents=True)
    saved.write_text(json.dumps({"serving": {"state": "serving", "version": "2026-11-01"}}))
    stacks, calls = Stacks(endpoint), []
    from archform.deploy import DeployFailed

    with pytest.raises(DeployFailed) as failed:
        deploy(ctx, runners=_runners(stacks, calls))
    assert failed.value.phase == "pulumi"
    assert "serves version '2026-11-01'" in " ".join(console.export_text().split())
    assert "sivaro-serve" not in stacks.runs
