"""A Platform's fleet before and after its first release.

The Platform's registry is created in the same deploy as the fleet, so on the first deploy
it holds no promoted model version: the fleet's stage Job would look for ``SHA256SUMS`` of a
version nobody published, fail, and stop the deploy. Instead:

- the pulumi phase asks the registry (S3 API, boto3; ``AWS_ENDPOINT_URL`` is honoured)
  whether the version the fleet serves is there (``SHA256SUMS`` and ``manifest.json``, the
  two objects ``archform promote`` writes last) and brings the fleet up with stack config
  ``serve=false`` while it is not: clusters, pools, add-ons, identities, no serving objects;
- the serve phase, last, regenerates the tree (``release.json`` may have been written by a
  promotion since) and, when the release is in the registry, runs the fleet's ``pulumi up``
  with ``serve=true``; otherwise it stops, names the exact ``archform promote`` command and
  is recorded as waiting, so ``archform deploy ... --from serve`` resumes there.

A fleet stack that already serves is never switched back to infrastructure only: if its
release vanished from the registry the phase fails instead of deleting the Deployments.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from archform.deploy.plan import PulumiProject, Registry
from archform.render.targets.kubernetes.weights import MANIFEST, SUMS
from archform.spec import InferenceFleet, UsageError

SERVE_KEY = "serve"


class AwaitingRelease(Exception):
    """The registry holds no release for a fleet yet; the message says how to publish one."""


@dataclass(frozen=True, slots=True)
class ServedRelease:
    """The release a fleet's generated program serves, and where the registry keeps it."""

    fleet: str
    version: str
    source: str
    bucket: str
    prefix: str  # key prefix of the version folder inside the bucket


def served(ctx: Any, project: PulumiProject) -> ServedRelease:
    """The release the fleet serves now (release.json in the tree, else the blueprint's)."""
    from archform.render.generate import read_releases
    from archform.render.targets.fleet.view import served_release

    doc = ctx.blueprints.by_name[project.document]
    assert isinstance(doc.model, InferenceFleet)
    releases = read_releases(ctx.plan.out_dir, ctx.blueprints, ctx.docs)
    release = served_release(doc.model, releases.get(project.document))
    bucket, _, prefix = release.source.removeprefix("s3://").partition("/")
    return ServedRelease(project.document, release.version, release.source, bucket, prefix)


def release_present(registry: Registry, release: ServedRelease) -> bool:
    """Whether the version's SHA256SUMS and manifest.json are in the registry (HEAD).

    boto3's usual credential chain and AWS_ENDPOINT_URL apply; a registry the deployer
    cannot read is an error naming the bucket, never "no release".
    """
    import boto3  # type: ignore[import-untyped]
    from botocore.exceptions import (  # type: ignore[import-untyped]
        BotoCoreError,
        ClientError,
        NoCredentialsError,
    )

    endpoint = os.environ.get("AWS_ENDPOINT_URL") or None
    client = boto3.client("s3", region_name=registry.region, endpoint_url=endpoint)
    hint = "give the deployer read access to the registry (credentials, AWS_ENDPOINT_URL)"
    for name in (SUMS, MANIFEST):
        key = release.prefix + name
        try:
            client.head_object(Bucket=release.bucket, Key=key)
        except ClientError as exc:
            code = str((exc.response or {}).get("Error", {}).get("Code", ""))
            if code in ("404", "NoSuchKey", "NotFound"):
                return False
            raise UsageError(f"s3://{release.bucket}/{key}: {code or exc}", hint) from None
        except NoCredentialsError:
            raise UsageError(f"s3://{release.bucket}: no AWS credentials found", hint) from None
        except BotoCoreError as exc:
            raise UsageError(
                f"cannot reach the registry s3://{release.bucket}: {exc}", hint
            ) from None
    return True


def was_serving(state_dir: Path, project: PulumiProject) -> str | None:
    """The version the fleet stack served at its last `pulumi up`, from the saved outputs."""
    saved = state_dir / "outputs" / f"{project.document}-{project.role}.json"
    try:
        outputs = json.loads(saved.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    serving = outputs.get("serving") if isinstance(outputs, dict) else None
    if isinstance(serving, dict) and serving.get("state") == "serving":
        return str(serving.get("version", ""))
    return None


def serve_config(ctx: Any, project: PulumiProject, say: Callable[[str], None]) -> dict[str, str]:
    """Stack config for a fleet's `pulumi up` in the pulumi phase: serve only with a release."""
    if project.registry is None:
        return {}
    release = served(ctx, project)
    if release_present(project.registry, release):
        return {SERVE_KEY: "true"}
    before = was_serving(ctx.plan.state_dir, project)
    if before is not None:
        raise UsageError(
            f"{release.source} has no {SUMS}/{MANIFEST}, but the fleet "
            f"{project.document} serves version {before!r}: nothing was changed",
            "restore the version in the registry, or promote another one, then resume",
        )
    say(
        f"    {release.source}: no promoted release yet; {project.document} comes up as "
        "infrastructure only (serve=false)"
    )
    return {SERVE_KEY: "false"}


def promote_command(registry: Registry, out_dir: Path) -> str:
    """The command that publishes a checkpoint into the registry and records the release."""
    config = out_dir / registry.promote_config
    approve = " --approve" if registry.approval == "manual" else ""
    return (
        f"archform promote {config} --checkpoint CHECKPOINT_DIR --version VERSION "
        f"--run-id RUN_ID{approve}"
    )


UpFn = Callable[[Any, PulumiProject, dict[str, str]], dict[str, Any]]


def run_serve(ctx: Any, up: UpFn) -> None:
    """The serve phase: regenerate, then bring every registry-fed fleet to its release."""
    from archform.deploy import phases

    phases.run_generate(ctx)
    for project in ctx.plan.pulumi:
        if project.registry is None:
            continue
        release = served(ctx, project)
        if not release_present(project.registry, release):
            raise AwaitingRelease(
                f"{project.document}: the registry s3://{release.bucket} holds no release "
                f"of {release.source} yet; promote a checkpoint: "
                f"{promote_command(project.registry, ctx.plan.out_dir)}"
            )
        ctx.reporter.say(f"  {project.document}: serving {release.version} ({release.source})")
        up(ctx, project, {SERVE_KEY: "true"})
