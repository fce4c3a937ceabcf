"""A real S3-compatible server for promotion tests: moto's standalone server on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def moto_server(log: Path) -> Iterator[str]:
    """Start `python -m moto.server` on a free loopback port; yield its endpoint URL."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(endpoint + "/", timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto server did not start: {log.read_text()}") from None
                time.sleep(0.1)
        yield endpoint
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def client(endpoint: str) -> Any:
    """A second, independent S3 client (the test's own view of the store)."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def env(endpoint: str) -> dict[str, str]:
    """Environment for `archform promote` subprocesses."""
    out = dict(CREDENTIALS)
    out["AWS_ENDPOINT_URL"] = endpoint
    out["HOME"] = os.environ.get("HOME", "/tmp")
    return out


# The bundled Platform's model (blueprints/platform-two-tier.yaml: layers 40, kv_heads 40,
# head_dim 128) has the shape of Llama-2-13B, whose published config.json gives
# num_hidden_layers 40, num_attention_heads 40, num_key_value_heads 40, hidden_size 5120
# (https://huggingface.co/meta-llama/Llama-2-13b-hf/blob/main/config.json).
LLAMA_13B_CONFIG: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 5120,
    "intermediate_size": 13824,
    "num_hidden_layers": 40,
    "num_attention_heads": 40,
    "num_key_value_heads": 40,
    "max_position_embeddings": 4096,
    "vocab_size": 32000,
    "torch_dtype": "float16",
}


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int], bytes]]) -> None:
    """Write `tensors` (name -> (dtype, shape, data)) with the real safetensors library."""
    import ctypes

    from safetensors import TensorSpec, serialize_file

    buffers = {
        name: ctypes.create_string_buffer(data, len(data)) for name, (_, _, data) in tensors.items()
    }
    specs = {
        name: TensorSpec(
            dtype=dtype, shape=shape, data_ptr=ctypes.addressof(buffers[name]), data_len=len(data)
        )
        for name, (dtype, shape, data) in tensors.items()
    }
    serialize_file(specs, str(path), {"format": "pt"})


def hf_checkpoint(folder: Path, *, shards: int = 2, config: dict[str, Any] | None = None) -> Path:
    """A Hugging Face model folder (save_pretrained layout) a serving engine can open.

    Real safetensors shards (written by the safetensors library; tiny tensors, the shape
    check reads config.json), the shard index, config.json and a tokenizer.
    """
    import json

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config or LLAMA_13B_CONFIG, indent=2) + "\n")
    (folder / "generation_config.json").write_text('{"bos_token_id": 1, "eos_token_id": 2}\n')
    (folder / "tokenizer.json").write_text(
        json.dumps({"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}}) + "\n"
    )
    (folder / "tokenizer_config.json").write_text('{"tokenizer_class": "LlamaTokenizer"}\n')
    weight_map: dict[str, str] = {}
    for i in range(shards):
        name = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        tensors = {
            f"model.layers.{i}.self_attn.k_proj.weight": ("bfloat16", [4, 8], bytes([i + 1]) * 64),
            f"model.layers.{i}.input_layernorm.weight": ("float32", [8], bytes([i + 2]) * 32),
        }
        write_safetensors(folder / name, tensors)
        weight_map.update(dict.fromkeys(tensors, name))
    index = {"metadata": {"total_size": 96 * shards}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    return folder


# Content types whose body pulumi-aws's getObject returns as `body` (its documented list);
# any other object comes back without one.
_READABLE = ("text/", "application/json", "application/xml", "application/yaml")


def s3_invokes(endpoint: str) -> dict[str, Any]:
    """Answers for the S3 invokes a generated program makes, from the S3 server at `endpoint`.

    A stand-in for pulumi-aws's own implementation (there is no provider binary here): the
    same ListObjectsV2 and GetObject calls, made with boto3, mapped to the invokes' result
    fields (`keys`; `body`, `etag`, `contentType`). An S3 error comes back as the invoke's
    failure, which the SDK raises in the program as "invoke of <token> failed: ...".
    """
    from botocore.exceptions import ClientError

    s3 = client(endpoint)

    def get_objects(args: dict[str, Any]) -> dict[str, Any]:
        listed = s3.list_objects_v2(Bucket=args["bucket"], Prefix=args.get("prefix", ""))
        keys = [o["Key"] for o in listed.get("Contents", [])]
        return {
            "id": args["bucket"],
            "bucket": args["bucket"],
            "keys": keys,
            "commonPrefixes": [],
            "owners": [],
        }

    def get_object(args: dict[str, Any]) -> dict[str, Any]:
        found = s3.get_object(Bucket=args["bucket"], Key=args["key"])
        kind = str(found.get("ContentType", ""))
        out = {
            "id": args["key"],
            "bucket": args["bucket"],
            "key": args["key"],
            "etag": found["ETag"],
            "contentType": kind,
        }
        if kind.startswith(_READABLE):
            out["body"] = found["Body"].read().decode("utf-8")
        return out

    def failing_as_the_provider(call: Any) -> Any:
        def answer(args: dict[str, Any]) -> Any:
            try:
                return call(args)
            except ClientError as exc:
                error = exc.response.get("Error", {})
                return {}, [("bucket", f"{error.get('Code')}: {error.get('Message')}")]

        return answer

    return {
        "aws:s3/getObjects:getObjects": failing_as_the_provider(get_objects),
        "aws:s3/getObject:getObject": failing_as_the_provider(get_object),
    }
