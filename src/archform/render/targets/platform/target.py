"""The Platform target: the model registry between the tiers, and the promotion config.

For a Platform document it writes (relative to the document's root):

- ``pulumi/``: a Python Pulumi project for the registry bucket and the training tier's
  writer identity (it may write the model prefix). The fleet reads the registry through its
  own per-region identities, which its program creates with the clusters (the fleet
  target), so the registry program creates no reader;
- ``promote/``: ``promote.json`` (what ``archform promote`` needs: bucket, region, model,
  the checkpoint layout and shape the fleet loads, the fleet's release copy) and a README
  saying how to run a promotion.

The training cluster and the fleet are rendered by their own targets; when a Platform is
generated together with them, each document gets its own folder, so the fleet's manifests
sit at ``../../<fleet>/kubernetes/<region>/`` relative to ``promote/``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from archform.render.env import provider_template, render
from archform.render.target import Target
from archform.render.targets.common.clouds import cloud
from archform.render.writer import GeneratedFile
from archform.spec import BlueprintSet, Document
from archform.spec.checkpoints import format_for_server
from archform.spec.models.inference import InferenceFleet
from archform.spec.models.platform import Platform
from archform.spec.provider import spec_of
from archform.spec.release import RELEASE_FILE, pointer_key, split_source

PULUMI = "pulumi"
PROMOTE = "promote"
CONFIG = "promote.json"
# Old object versions kept this long after being overwritten or deleted; a promoted
# version is never overwritten by archform, so this only bounds accidental rewrites.
NONCURRENT_DAYS = 30
# Multipart uploads of multi-GiB checkpoints that die half-way leave invisible parts that
# are billed; S3 aborts them after this many days.
ABORT_MULTIPART_DAYS = 7
# The Kubernetes service account the fleet's serving pods run as (the fleet target names it
# and binds it to its own per-region identity); the policy pack checks what it may reach.
FLEET_SERVICE_ACCOUNT = "model-reader"


def applies(doc: Document) -> bool:
    """Platform documents."""
    return isinstance(doc.model, Platform)


def _fleet(doc: Document, blueprints: BlueprintSet) -> InferenceFleet | None:
    """The fleet the Platform serves from; None when `inference` names a TrainingCluster.

    The loader resolved the name; serving on the training cluster is legal but linted
    (PLT001), and has no fleet to promote into.
    """
    assert isinstance(doc.model, Platform)
    found = blueprints.by_name.get(doc.model.inference)
    assert found is not None, "checked by the loader"
    return found.model if isinstance(found.model, InferenceFleet) else None


def service_account_id(document: str, suffix: str) -> str:
    """A GCP service account id (6-30 chars) from a document name, stable and unique."""
    wanted = f"{document}-{suffix}"
    if len(wanted) <= 30:
        return wanted
    digest = hashlib.sha256(document.encode("utf-8")).hexdigest()[:6]
    keep = 30 - len(suffix) - len(digest) - 2
    return f"{document[:keep].rstrip('-')}-{digest}-{suffix}"


@dataclass(frozen=True, slots=True)
class RegistryView:
    """The view-model of the registry program (names derived from the documents)."""

    platform: str
    provider: str
    region: str
    bucket: str
    model: str
    model_prefix: str
    training: str
    inference: str
    writer_name: str
    training_role_pattern: str
    release_prefix: str
    noncurrent_days: int
    abort_multipart_days: int
    writer_account_id: str
    tags: dict[str, str]
    labels: dict[str, str]


def registry_view(platform: Platform, fleet: InferenceFleet) -> RegistryView:
    """The view-model of the registry program (names derived from the documents)."""
    model = fleet.model.name
    return RegistryView(
        platform=platform.name,
        provider=platform.registry.provider,
        region=platform.registry.region,
        bucket=platform.registry.bucket,
        model=model,
        model_prefix=f"{model}/",
        training=platform.training,
        inference=platform.inference,
        writer_name=f"{platform.training}-registry-writer",
        # pulumi auto-names the training node role "<cluster>-node-<suffix>"
        training_role_pattern=f"{platform.training}-node-*",
        # the folder of the fleets' release pointers (spec.release.pointer_key)
        release_prefix=pointer_key(model, fleet.name).rsplit("/", 1)[0] + "/",
        noncurrent_days=NONCURRENT_DAYS,
        abort_multipart_days=ABORT_MULTIPART_DAYS,
        writer_account_id=service_account_id(platform.training, "reg-writer"),
        tags={"archform:platform": platform.name, "archform:role": "model-registry"},
        # GCP label keys allow no ':'
        labels={"archform-platform": platform.name, "archform-role": "model-registry"},
    )


def promote_config(platform: Platform, fleet: InferenceFleet) -> dict[str, Any]:
    """The JSON config `archform promote` reads; paths are relative to the config file.

    A JSON document (written with sorted keys), not a view: it stays a dict.
    """
    fmt = format_for_server(fleet.server.kind)
    return {
        "schema": "archform.promote/v3",
        "platform": platform.name,
        "registry": {
            "provider": platform.registry.provider,
            "bucket": platform.registry.bucket,
            "region": platform.registry.region,
        },
        "model": fleet.model.name,
        "approval": platform.promotion.approval,
        # What the fleet's server loads: promote refuses a checkpoint without this layout
        # or with another shape than the blueprint declares (null: not declared).
        "checkpoint": {
            "server": fleet.server.kind,
            "format": fmt.name if fmt is not None else None,
            "layers": fleet.model.layers,
            "kv_heads": fleet.model.kv_heads,
            "head_dim": fleet.model.head_dim,
        },
        "fleet": {
            "name": fleet.name,
            # The served release (archform.spec.release) lives in the registry at
            # <model>/_releases/<fleet>.json; promote writes it, then this local copy,
            # which generate reads. The fleet's program checks the registry's.
            "release_file": f"../../{fleet.name}/{RELEASE_FILE}",
            "release_pointer": cloud(platform.registry.provider).object_url(
                platform.registry.bucket, pointer_key(fleet.model.name, fleet.name)
            ),
        },
    }


def render_platform(platform: Platform, fleet: InferenceFleet) -> list[GeneratedFile]:
    """Every file of a Platform's registry and promotion step."""
    provider = platform.registry.provider
    assert spec_of(provider).registry_scheme, "checked by spec.buildable"
    registry = cloud(provider).object_url(platform.registry.bucket, f"{fleet.model.name}/")
    assert split_source(fleet.model.source)[0] == registry, "checked by spec.loader"
    view = registry_view(platform, fleet)
    config = promote_config(platform, fleet)
    base = provider_template(provider, "platform")
    files = [
        GeneratedFile.text(f"{PULUMI}/Pulumi.yaml", render(f"{base}/Pulumi.yaml.j2", view)),
        GeneratedFile.text(f"{PULUMI}/__main__.py", render(f"{base}/__main__.py.j2", view)),
        GeneratedFile.text(f"{PULUMI}/README.md", render(f"{base}/README.md.j2", view)),
        GeneratedFile.text(
            f"{PULUMI}/requirements.txt", render(f"{base}/requirements.txt.j2", view)
        ),
    ]
    if spec_of(provider).promote_store is None:
        return sorted(files, key=lambda f: f.path)
    files += [
        GeneratedFile.text(
            f"{PROMOTE}/{CONFIG}", json.dumps(config, indent=2, sort_keys=True) + "\n"
        ),
        GeneratedFile.text(
            f"{PROMOTE}/README.md",
            render("platform/promote/README.md.j2", {"view": view, "config": config}),
        ),
    ]
    return sorted(files, key=lambda f: f.path)


def _render(doc: Document, blueprints: BlueprintSet) -> list[GeneratedFile]:
    platform = doc.model
    assert isinstance(platform, Platform)
    fleet = _fleet(doc, blueprints)
    if fleet is None:
        return [
            GeneratedFile.text(
                f"{PULUMI}/README.md",
                f"# {platform.name}: no model registry generated\n\n"
                f"`inference: {platform.inference}` names a TrainingCluster, not an "
                "InferenceFleet: there is no serving tier to promote weights into "
                "(`archform lint` reports PLT001). Name an InferenceFleet to get the "
                "registry and the promotion config.\n",
            )
        ]
    return render_platform(platform, fleet)


TARGET = Target(name="platform", applies=applies, render=_render)
