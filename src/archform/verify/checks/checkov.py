"""Kubernetes manifests: the real Checkov (kubernetes framework), every generated manifest set.

Checkov runs once per tree over every versioned manifest (`kubernetes/<region>/*.yaml`,
the same files kubernetes-validate checks) with `--skip-download` (no platform calls). One
result per manifest folder: failed with each failing check (id, name, resource, file), or
passed with the count and every skipped check and its reason: the checks skipped for all
manifests (`skips()` below, each with the reason archform does not meet it) and the ones a
manifest skips itself (a `checkov.io/skip1` annotation, e.g. an image without a recorded
digest). Without Checkov on PATH: skipped, with the command that installs it (archform.install).
"""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from archform.install import checkov_hint
from archform.render.public import cli_home_dirs
from archform.verify import Check, Result, missing_tools, tool_path
from archform.verify.checks.kubernetes import manifests

NAME = "checkov"

# Checks archform's manifests do not meet on purpose: check id -> why (data, printed by
# verify with every result). Everything else Checkov checks must pass.
_SKIPS: dict[str, str] = {
    "CKV_K8S_11": (
        "no CPU limits: a CFS quota throttles the model server's tokenizer and scheduler "
        "threads (latency spikes while the GPU idles); pods request their CPU share and "
        "carry memory and ephemeral-storage limits"
    ),
    "CKV_K8S_15": (
        "imagePullPolicy IfNotPresent: images are pinned (digest, else a fixed tag); Always "
        "re-contacts the registry for a multi-GB image on every start and fails starts "
        "during a registry outage"
    ),
    "CKV_K8S_22": (
        "writable root filesystem: the server images (torch/triton compile caches) and the "
        "cloud CLIs ({cli_dirs}) write under their home directories; a "
        "read-only root with a mount for each is untested on the target images"
    ),
    "CKV_K8S_23": (
        "runs as the image's user (root in the vLLM, TGI, Triton and cloud CLI images): "
        "another UID needs a writable HOME and is untested on the target images; every "
        "container drops all capabilities and cannot gain privileges"
    ),
    "CKV_K8S_40": (
        "UID is the image's (see CKV_K8S_23); all capabilities dropped, no privilege escalation"
    ),
}


@cache
def skips() -> dict[str, str]:
    """The checks skipped for every manifest, with why (each provider's CLI folders in)."""
    dirs = ", ".join(cli_home_dirs())
    return {k: v.replace("{cli_dirs}", dirs) for k, v in _SKIPS.items()}


TIMEOUT_S = 600


def _applies(root: Path) -> bool:
    return bool(manifests(root))


def _folder(root: Path, file_path: str) -> str:
    """The manifest folder (kubernetes/<region>) of a Checkov result's file path."""
    path = Path(file_path)
    rel = (path if path.is_absolute() else root / file_path.lstrip("/")).resolve()
    try:
        return rel.parent.relative_to(root.resolve()).as_posix()
    except ValueError:
        return Path(file_path).parent.as_posix().lstrip("/")


def _reports(out: str) -> list[dict[str, Any]]:
    data = json.loads(out)
    reports = data if isinstance(data, list) else [data]
    return [r for r in reports if isinstance(r, dict) and r.get("check_type") == "kubernetes"]


def _run(root: Path) -> list[Result]:
    found = manifests(root)
    if missing_tools("checkov"):
        return [
            Result(
                NAME,
                str(root),
                "skipped",
                f"checkov is not on PATH (hint: {checkov_hint()})",
            )
        ]
    cmd = [tool_path("checkov"), "--framework", "kubernetes", "-o", "json", "--skip-download"]
    cmd += ["--skip-check", ",".join(sorted(skips()))]
    for path, _ in found:
        cmd += ["-f", str(path)]
    env = {**os.environ, "BC_SKIP_MAPPING": "TRUE", "CHECKOV_RUN_SCA_PACKAGE_SCAN_V2": ""}
    proc = subprocess.run(
        cmd, cwd=root, capture_output=True, text=True, timeout=TIMEOUT_S, env=env, check=False
    )
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        return [
            Result(
                NAME,
                str(root),
                "failed",
                f"checkov exited {proc.returncode}: "
                + (proc.stderr.strip().splitlines() or ["no output"])[-1],
            )
        ]
    folders = sorted({p.parent.relative_to(root).as_posix() for p, _ in found})
    passed = dict.fromkeys(folders, 0)
    failed: dict[str, list[str]] = {f: [] for f in folders}
    skipped: dict[str, dict[str, str]] = {f: {} for f in folders}
    for report in _reports(proc.stdout):
        results = report.get("results", {})
        for item in results.get("passed_checks", []):
            folder = _folder(root, item["file_path"])
            passed[folder] = passed.get(folder, 0) + 1
        for item in results.get("failed_checks", []):
            folder = _folder(root, item["file_path"])
            failed.setdefault(folder, []).append(
                f"{item['check_id']} {item['check_name']} ({item['resource']}, "
                f"{Path(item['file_path']).name})"
            )
        for item in results.get("skipped_checks", []):
            # Skipped by a manifest's own checkov.io/skip annotation, with its reason.
            folder = _folder(root, item["file_path"])
            result = item.get("check_result") or {}
            comment = str(result.get("suppress_comment") or item.get("suppress_comment") or "")
            key = f"{item['check_id']} ({item['resource']})"
            skipped.setdefault(folder, {})[key] = comment or "no reason given"
    out: list[Result] = []
    for folder in folders:
        if failed[folder]:
            out.append(Result(NAME, folder, "failed", "; ".join(sorted(failed[folder]))))
            continue
        skips_here = {**skips(), **skipped[folder]}
        listed = "; ".join(f"{k}: {v}" for k, v in sorted(skips_here.items()))
        out.append(
            Result(NAME, folder, "passed", f"{passed[folder]} checks passed; skipped: {listed}")
        )
    return out


CHECK = Check(name=NAME, applies=_applies, run=_run, tools=("checkov",))
