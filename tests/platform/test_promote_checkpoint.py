"""Issue 20, "promote publishes any folder": `archform promote` refuses a checkpoint the
fleet's serving engine cannot load, before anything is uploaded, in one line (exit 2).

Checkpoints are written with the reference safetensors library (promote_support); the
registry is moto's standalone S3 server, so a checkpoint that is *not* refused really gets
published (what b0c054e did with every folder). The safetensors header check is held
against the reference reader: whatever it refuses, `safetensors.deserialize` refuses too.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from promote_support import (
    LLAMA_13B_CONFIG,
    client,
    env,
    hf_checkpoint,
    moto_server,
    write_safetensors,
)

import support
from archform.render.generate import build_files
from archform.render.writer import write_tree
from archform.spec import UsageError, load_paths

pytestmark = [pytest.mark.integration]

PLATFORM = support.BLUEPRINTS / "platform-two-tier.yaml"


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    support.require_module("boto3", "moto", "safetensors")
    log = tmp_path_factory.mktemp("moto") / "moto.log"
    with moto_server(log) as url:
        s3 = client(url)
        s3.create_bucket(Bucket="sivaro-models")
        yield url


@pytest.fixture
def config(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    write_tree(out, build_files(load_paths([PLATFORM])))
    return out / "sivaro" / "promote" / "promote.json"


def _uploaded(endpoint: str, version: str) -> list[str]:
    listed = client(endpoint).list_objects_v2(
        Bucket="sivaro-models", Prefix=f"sivaro-13b/{version}/"
    )
    return [o["Key"] for o in listed.get("Contents", [])]


def _config_with(**changes: Any) -> dict[str, Any]:
    config = dict(LLAMA_13B_CONFIG)
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    return config


def _drop(name: str) -> Callable[[Path], None]:
    return lambda ckpt: (ckpt / name).unlink()


def _shards_in_subfolder(ckpt: Path) -> None:
    (ckpt / "shards").mkdir()
    for shard in ckpt.glob("*.safetensors"):
        shard.rename(ckpt / "shards" / shard.name)
    (ckpt / "model.safetensors.index.json").unlink()


def _truncate(ckpt: Path) -> None:
    shard = ckpt / "model-00002-of-00002.safetensors"
    shard.write_bytes(shard.read_bytes()[:-10])


def _index_names_a_missing_shard(ckpt: Path) -> None:
    (ckpt / "model-00002-of-00002.safetensors").unlink()


def _only_pickles(ckpt: Path) -> None:
    for shard in ckpt.glob("*.safetensors"):
        shard.rename(shard.with_suffix(".bin"))
    (ckpt / "model.safetensors.index.json").unlink()


def _write_config(config: dict[str, Any]) -> Callable[[Path], None]:
    return lambda ckpt: (ckpt / "config.json").write_text(json.dumps(config))


# (break the checkpoint, what the one line must say)
CASES: dict[str, tuple[Callable[[Path], None], list[str]]] = {
    "no-config": (
        _drop("config.json"),
        ["config.json: not found; vllm reads the model's architecture from config.json"],
    ),
    "fewer-layers": (
        _write_config(_config_with(num_hidden_layers=32)),
        ["config.json: num_hidden_layers is 32, expected 40 (model.layers of sivaro-13b"],
    ),
    "gqa-kv-heads": (
        _write_config(_config_with(num_key_value_heads=8)),
        ["config.json: num_key_value_heads is 8, expected 40 (model.kv_heads of sivaro-13b"],
    ),
    "head-dim-from-hidden-size": (
        # no head_dim key: vLLM derives it as hidden_size // num_attention_heads = 4096 // 40
        _write_config(_config_with(hidden_size=4096)),
        ["hidden_size // num_attention_heads is 102, expected 128 (model.head_dim"],
    ),
    "config-not-json": (
        lambda ckpt: (ckpt / "config.json").write_text("{'layers': 40}"),
        ["config.json: not JSON"],
    ),
    "no-tokenizer": (
        _drop("tokenizer.json"),
        [
            "no tokenizer at the folder's root (expected tokenizer.json or tokenizer.model or "
            "vocab.json with merges.txt)"
        ],
    ),
    "shards-in-a-subfolder": (
        _shards_in_subfolder,
        [
            "no *.safetensors weights at the folder's root (found shards/model-00001-of-00002"
            ".safetensors and others)"
        ],
    ),
    "pickle-weights-only": (_only_pickles, ["no *.safetensors weights at the folder's root;"]),
    "truncated-shard": (
        _truncate,
        [
            "model-00002-of-00002.safetensors: not a readable safetensors file: the tensors "
            "index 96 bytes of data, the file holds 86"
        ],
    ),
    "index-names-a-missing-shard": (
        _index_names_a_missing_shard,
        [
            "model.safetensors.index.json: names 'model-00002-of-00002.safetensors', which is "
            "not a *.safetensors file of the checkpoint"
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_promote_refuses_a_checkpoint_the_server_cannot_load(
    case: str, config: Path, endpoint: str, tmp_path: Path
) -> None:
    breaker, expected = CASES[case]
    ckpt = hf_checkpoint(tmp_path / "ckpt", shards=2)
    breaker(ckpt)
    proc = support.run_cli(
        [
            "promote",
            str(config),
            "--checkpoint",
            str(ckpt),
            "--version",
            case,
            "--run-id",
            "r1",
            "--approve",
        ],
        env=env(endpoint),
        timeout=180,
    )
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: {ckpt}"), line
    for text in expected:
        assert text in line, line
    assert "(hint: " in line and "Traceback" not in proc.stderr
    assert _uploaded(endpoint, case) == [], "nothing may be uploaded"
    assert not (config.parent.parent.parent / "sivaro-serve" / "release.json").exists()


def test_a_loadable_checkpoint_is_published_and_the_check_is_logged(
    config: Path, endpoint: str, tmp_path: Path
) -> None:
    ckpt = hf_checkpoint(tmp_path / "ckpt", shards=2)
    proc = support.run_cli(
        ["promote", str(config), "--checkpoint", str(ckpt), "--version", "ok", "--run-id", "r1"],
        env=env(endpoint),
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    assert "checked: 2 safetensors file(s), 4 tensors, head_dim 128, kv_heads 40, layers 40" in (
        proc.stdout
    )
    assert len(_uploaded(endpoint, "ok")) == 9  # 7 files, SHA256SUMS, manifest.json


def _check(ckpt: Path, **shape: int | None) -> Any:
    from archform.promote.checkpoint import CheckpointExpect, check_checkpoint

    files = sorted(p.relative_to(ckpt).as_posix() for p in ckpt.rglob("*") if p.is_file())
    wanted = {"layers": 40, "kv_heads": 40, "head_dim": 128, **shape}
    return check_checkpoint(ckpt, files, CheckpointExpect("vllm", "huggingface", **wanted), "m")


def test_shape_keys_are_read_the_way_vllm_reads_them(tmp_path: Path) -> None:
    support.require_module("safetensors")
    # Multimodal configs nest the language model's config (vLLM's hf_text_config).
    nested = hf_checkpoint(
        tmp_path / "mm",
        config={"model_type": "mllama", "text_config": {**LLAMA_13B_CONFIG, "head_dim": 128}},
    )
    assert _check(nested).shape == {"layers": 40, "kv_heads": 40, "head_dim": 128}
    # Falcon names its KV heads num_kv_heads; without any KV key, KV heads = attention heads.
    falcon = hf_checkpoint(
        tmp_path / "falcon", config=_config_with(num_key_value_heads=None, num_kv_heads=8)
    )
    assert _check(falcon, kv_heads=8).shape["kv_heads"] == 8
    mha = hf_checkpoint(tmp_path / "mha", config=_config_with(num_key_value_heads=None))
    assert _check(mha).shape["kv_heads"] == 40
    # Shape fields the blueprint leaves out are not checked.
    other = hf_checkpoint(tmp_path / "other", config=_config_with(num_hidden_layers=80))
    assert _check(other, layers=None).shape["layers"] == 80
    with pytest.raises(UsageError, match="num_hidden_layers is 80, expected 40"):
        _check(other)
    # A value of the wrong type is named as it is written.
    text = hf_checkpoint(tmp_path / "text", config=_config_with(num_hidden_layers="40"))
    with pytest.raises(UsageError, match="num_hidden_layers is '40', expected 40"):
        _check(text)


# --- the safetensors header, against the reference reader -------------------------------


def _reference_reads(path: Path) -> int:
    from safetensors import deserialize

    return len(deserialize(path.read_bytes()))


def test_files_the_reference_writes_are_read(tmp_path: Path) -> None:
    support.require_module("safetensors")
    from archform.promote.checkpoint import read_safetensors_header

    path = tmp_path / "mixed.safetensors"
    write_safetensors(
        path,
        {
            "bf16": ("bfloat16", [3, 5], bytes(30)),
            "fp8": ("float8_e4m3fn", [7], bytes(7)),
            "i64": ("int64", [2], bytes(16)),
            "scalar": ("float32", [], bytes(4)),
            "empty": ("float16", [0, 4], b""),
            "flag": ("bool", [3], bytes(3)),
        },
    )
    assert read_safetensors_header(path) == _reference_reads(path) == 6


def _raw(header: dict[str, Any] | bytes, data: bytes, length: int | None = None) -> bytes:
    body = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(body) if length is None else length) + body + data


GOOD = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
BROKEN: dict[str, tuple[bytes, str]] = {
    "shorter-than-the-length-field": (b"\x01\x00\x00", "shorter than the 8-byte header length"),
    "length-past-the-end": (_raw(GOOD, bytes(8), length=10_000), "runs past the end of the file"),
    "length-over-the-limit": (
        _raw(GOOD, bytes(8), length=100_000_001),
        "exceeds the format's 100000000 bytes",
    ),
    "header-not-an-object": (_raw(b"[1, 2]  ", b""), "does not start with '{'"),
    "header-not-json": (_raw(b"{not json}", b""), "the header is not UTF-8 JSON"),
    "unknown-dtype": (
        _raw({"a": {"dtype": "F12", "shape": [2], "data_offsets": [0, 8]}}, bytes(8)),
        "tensor 'a' has dtype 'F12'",
    ),
    "size-does-not-match-shape": (
        _raw({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, bytes(8)),
        "needs 12 bytes, data_offsets give 8",
    ),
    "hole-between-tensors": (
        _raw(
            {
                "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                "b": {"dtype": "F32", "shape": [1], "data_offsets": [8, 12]},
            },
            bytes(12),
        ),
        "tensor 'b' starts at 8, expected 4",
    ),
    "extra-bytes-after-the-data": (_raw(GOOD, bytes(9)), "index 8 bytes of data, the file holds 9"),
    "metadata-not-strings": (
        _raw({**GOOD, "__metadata__": {"step": 3}}, bytes(8)),
        "__metadata__ must map strings to strings",
    ),
    "negative-offset": (
        _raw({"a": {"dtype": "F32", "shape": [2], "data_offsets": [-1, 7]}}, bytes(8)),
        "has data_offsets [-1, 7]",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_headers_the_reference_refuses_are_refused(case: str, tmp_path: Path) -> None:
    support.require_module("safetensors")
    from safetensors import SafetensorError, deserialize

    from archform.promote.checkpoint import read_safetensors_header

    content, message = BROKEN[case]
    path = tmp_path / f"{case}.safetensors"
    path.write_bytes(content)
    with pytest.raises(UsageError) as refused:
        read_safetensors_header(path)
    assert message in refused.value.message
    assert refused.value.message.startswith(f"{path}: not a readable safetensors file: ")
    with pytest.raises((SafetensorError, ValueError, OverflowError)):
        deserialize(content)


def test_the_good_header_above_is_good(tmp_path: Path) -> None:
    """The corruptions start from a header both readers accept."""
    support.require_module("safetensors")
    from archform.promote.checkpoint import read_safetensors_header

    path = tmp_path / "good.safetensors"
    path.write_bytes(_raw(GOOD, bytes(8)))
    assert read_safetensors_header(path) == _reference_reads(path) == 1


def test_duplicate_tensor_names_are_refused(tmp_path: Path) -> None:
    """The format forbids duplicate keys (README, "Duplicate keys are disallowed"); the
    reference parser does not enforce it, promote does: a duplicated name hides a tensor."""
    from archform.promote.checkpoint import read_safetensors_header

    header = b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, ' + (
        b'"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}'
    )
    path = tmp_path / "dup.safetensors"
    path.write_bytes(_raw(header, bytes(8)))
    with pytest.raises(UsageError, match="duplicate key 'a'"):
        read_safetensors_header(path)
