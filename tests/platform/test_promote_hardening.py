"""Issue 13, item 3 (patterns, symlinks) and item 1 (registry failures): `archform promote`
refuses `--version $'v2\\n'`, never follows a symlink out of the checkpoint, and a missing
bucket, missing credentials or an unreachable endpoint end in one line and exit 2.

The registry is moto's standalone S3 server over HTTP (promote_support); the unreachable
endpoint is a loopback port nothing listens on."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from promote_support import client, env, free_port, moto_server
from test_promote_e2e import FLEET_DEPLOYMENT, REGIONS, SERVICE

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import load_paths

pytestmark = [pytest.mark.integration]

PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    support.require_module("boto3", "moto")
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with moto_server(log) as url:
        yield url


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """promote.json of a generated Platform, with the fleet's Deployments in place."""
    out = tmp_path / "out"
    write_tree(out, build_files(load_paths([PLATFORM])))
    for region in REGIONS:
        folder = out / "sivaro-serve" / "kubernetes" / region
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "02-deployment-sivaro-serve.yaml").write_text(FLEET_DEPLOYMENT)
        (folder / "03-service-sivaro-serve.yaml").write_text(SERVICE)
    return out / "sivaro" / "promote" / "promote.json"


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    ckpt = tmp_path / "ckpt"
    (ckpt / "shards").mkdir(parents=True)
    (ckpt / "config.json").write_text('{"layers": 40}\n')
    (ckpt / "shards" / "model-00000.safetensors").write_bytes(b"\x00" * 4096)
    return ckpt


def promote(
    config: Path, ckpt: Path, *, version: str = "v1", run_id: str = "run-1", **environ: str
) -> tuple[int, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    base.update(
        AWS_CONFIG_FILE="/nonexistent",
        AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
        AWS_EC2_METADATA_DISABLED="true",
    )
    base.update(environ)
    args = ["promote", str(config), "--checkpoint", str(ckpt)]
    result = support.run_cli(
        [*args, "--version", version, "--run-id", run_id], env=base, timeout=180
    )
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return result.returncode, result.stderr


@pytest.mark.parametrize("version", ["v2\n", "v2\r", "v2\n; rm -rf /", " v2", "v2 "])
def test_version_must_match_in_full(config: Path, checkpoint: Path, version: str) -> None:
    code, err = promote(config, checkpoint, version=version)
    assert code == 2
    assert err.startswith(f"error: version {version!r} is not valid"), err


@pytest.mark.parametrize("run_id", ["run-1\n", "run-1\nx"])
def test_run_id_must_match_in_full(config: Path, checkpoint: Path, run_id: str) -> None:
    code, err = promote(config, checkpoint, run_id=run_id)
    assert code == 2
    assert err.startswith(f"error: run id {run_id!r} is not valid"), err


def test_a_symlinked_file_in_the_checkpoint_is_refused(
    config: Path, checkpoint: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "id_rsa"
    secret.write_text("PRIVATE KEY\n")
    (checkpoint / "shards" / "extra.bin").symlink_to(secret)
    code, err = promote(config, checkpoint)
    assert code == 2
    (line,) = err.splitlines()
    assert f"{checkpoint / 'shards' / 'extra.bin'}: is a symlink (to {secret})" in line
    assert "symlinks are never followed or uploaded" in line


def test_a_symlinked_folder_in_the_checkpoint_is_refused(
    config: Path, checkpoint: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    (elsewhere / ".netrc").write_text("machine x password y\n")
    (checkpoint / "more").symlink_to(elsewhere)
    code, err = promote(config, checkpoint)
    assert code == 2
    assert f"{checkpoint / 'more'}: is a symlink" in err


def test_without_credentials(config: Path, checkpoint: Path, endpoint: str) -> None:
    code, err = promote(config, checkpoint, AWS_ENDPOINT_URL=endpoint)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("error: s3://sivaro-models: no AWS credentials found"), line


def test_unreachable_endpoint(config: Path, checkpoint: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # bound once, then released: nothing listens
    code, err = promote(
        config,
        checkpoint,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_ENDPOINT_URL=dead,
    )
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("error: cannot reach the registry at"), line
    assert "hint: check --endpoint-url / AWS_ENDPOINT_URL" in line


def test_missing_bucket(config: Path, checkpoint: Path, endpoint: str) -> None:
    s3 = client(endpoint)
    assert "sivaro-models" not in [b["Name"] for b in s3.list_buckets().get("Buckets", [])]
    creds = env(endpoint)
    code, err = promote(config, checkpoint, **creds)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith("error: s3://sivaro-models: the registry bucket does not exist"), line


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_config_that_is_not_a_regular_file_is_refused(
    tmp_path: Path, checkpoint: Path, kind: str
) -> None:
    if kind == "fifo":
        config = tmp_path / "promote.json"
        os.mkfifo(config)  # nobody writes it: reading would block forever
    else:
        config = Path("/dev/zero")  # reading would never end
    code, err = promote(config, checkpoint)
    assert code == 2
    (line,) = err.splitlines()
    assert line.startswith(f"error: {config}: is a "), line
    assert "not a regular file; refusing to read it" in line
