"""Fuzz the commands test_fuzz_commands.py does not reach: init, deploy --dry-run, verify,
promote (against moto's in-process S3). Same rule: never exit 3, never a traceback.
Runs count toward the cross-worker floor (tests/support/fuzz_floor.py).
"""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from archform.bundled import presets
from spec.fuzz_support import (
    FREE_TEXT,
    VALUES,
    assert_no_crash,
    copy,
    documents,
    dump_raw,
    examples,
    invoke,
    locations,
    put,
)
from support import ROOT

DOCS = documents()
NAMES = st.one_of(st.sampled_from(sorted(presets())), st.text(max_size=20))
PATH_PARTS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00/"),
    min_size=1,
    max_size=20,
)


@settings(max_examples=examples(0.5))
@given(name=NAMES, part=PATH_PARTS, force=st.booleans(), exists=st.booleans())
def test_init_never_crashes(name: str, part: str, force: bool, exists: bool) -> None:
    if name.startswith("-"):
        name = "x" + name
    with tempfile.TemporaryDirectory(prefix="archform-fuzz-") as tmp:
        out = Path(tmp) / part
        if exists and part not in (".", ".."):
            out.write_text("mine\n")
        args = ["init", "--preset", name, "-o", str(out), *(["--force"] if force else [])]
        assert_no_crash(invoke(*args))


@settings(max_examples=examples(0.5))
@given(
    which=st.integers(0, 10**6),
    pick=st.integers(0, 10**6),
    value=VALUES,
    stack=st.one_of(st.just("prod"), st.text(max_size=12)),
)
def test_deploy_dry_run_never_crashes(which: int, pick: int, value: Any, stack: str) -> None:
    stem, index, _ = DOCS[which % len(DOCS)]
    docs = [copy(d) for s, _, d in DOCS if s == stem]
    locs = locations(docs[index])
    put(docs[index], locs[pick % len(locs)], value)
    if stack.startswith("-"):
        stack = "s" + stack
    with tempfile.TemporaryDirectory(prefix="archform-fuzz-") as tmp:
        path = Path(tmp) / "b.yaml"
        path.write_text(dump_raw(docs), "utf-8")
        out = str(Path(tmp) / "out")
        assert_no_crash(invoke("deploy", str(path), "--dry-run", "-o", out, "--stack", stack))


TREES = st.sampled_from(["missing", "file", "empty", "garbage-manifest", "manifest-list"])


@settings(max_examples=examples(0.3))
@given(
    tree=TREES,
    fmt=st.one_of(st.sampled_from(["text", "json"]), st.text(max_size=6)),
    jobs=st.one_of(st.integers(-5, 64).map(str), st.text(max_size=4)),
)
def test_verify_never_crashes_on_hostile_trees(tree: str, fmt: str, jobs: str) -> None:
    with tempfile.TemporaryDirectory(prefix="archform-fuzz-") as tmp:
        target = Path(tmp) / "out"
        if tree == "file":
            target.write_text("not a folder\n")
        elif tree != "missing":
            target.mkdir()
            if tree == "garbage-manifest":
                (target / ".archform-manifest.json").write_text("{not json")
            elif tree == "manifest-list":
                (target / ".archform-manifest.json").write_text("[1, 2]")
        if jobs.startswith("-") and not jobs[1:].isdigit():
            jobs = "j" + jobs
        args = ["verify", str(target), "--format", fmt or "text", "-j", jobs or "1"]
        assert_no_crash(invoke(*args, "--allow-skips", "--no-progress"))


@cache
def _hf_checkpoint() -> Any:
    """tests/platform/promote_support.hf_checkpoint (a real HF folder of the blueprint's model)."""
    import importlib.util

    from support import require_module

    require_module("safetensors")
    spec = importlib.util.spec_from_file_location(
        "promote_support_fuzz", ROOT / "tests" / "platform" / "promote_support.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.hf_checkpoint


@cache
def _platform_tree() -> Path:
    out = Path(tempfile.mkdtemp(prefix="archform-fuzz-platform-"))
    outcome = invoke(
        "generate", str(ROOT / "blueprints" / "platform-two-tier.yaml"), "-o", str(out)
    )
    assert outcome.code == 0, outcome.explain()
    return next(out.rglob("promote.json"))


@settings(max_examples=examples(0.1))
@given(
    version=st.one_of(st.sampled_from(["v1", "v12000", "2026-03"]), FREE_TEXT),
    run_id=st.one_of(st.just("run-42"), FREE_TEXT),
    created_at=st.one_of(st.none(), st.just("2026-03-01T12:00:00Z"), FREE_TEXT),
    files=st.dictionaries(
        st.sampled_from(["config.json", "model.safetensors", "a/b.bin"]),
        st.binary(max_size=64),
        max_size=3,
    ),
    approve=st.booleans(),
)
def test_promote_against_moto_never_crashes(
    version: str, run_id: str, created_at: str | None, files: dict[str, bytes], approve: bool
) -> None:
    import boto3
    from moto import mock_aws

    config = _platform_tree()
    bucket = json.loads(config.read_text())["registry"]["bucket"]
    with tempfile.TemporaryDirectory(prefix="archform-fuzz-") as tmp, mock_aws():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=bucket)
        ckpt = _hf_checkpoint()(Path(tmp) / "ckpt", shards=2)  # passes the shape check
        for rel, data in files.items():
            (ckpt / rel).parent.mkdir(parents=True, exist_ok=True)
            (ckpt / rel).write_bytes(data)
        args = ["promote", str(config), "--checkpoint", str(ckpt)]
        args += ["--version", version, "--run-id", run_id]
        if created_at is not None:
            args += ["--created-at", created_at]
        assert_no_crash(invoke(*args, *(["--approve"] if approve else [])))
