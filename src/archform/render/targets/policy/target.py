"""Target `policy`: a Pulumi CrossGuard policy pack beside each fleet and Platform program.

Output (relative to the document's root): pulumi/policy/ with PulumiPolicy.yaml,
__main__.py (serves the pack), policies.py (the policies), policy_core.py (what they share),
one cloud_<provider>.py per cloud the program deploys into (that provider's
templates/policy/cloud.py: its resource types and how they are read), pack_settings.py
(what this program is expected to hold, and which clouds), requirements.txt and README.md.
`pulumi preview --policy-pack policy` enforces the invariants in a real account;
`archform verify` evaluates policies.py on the mock-recorded resource graph of the program
next to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from archform import providers
from archform.render.env import exists, provider_template, render, shipped
from archform.render.plain import plain
from archform.render.target import Target
from archform.render.targets.common.pulumi import SettingRow
from archform.render.targets.fleet.target import SDK_PINS, fleet_data
from archform.render.targets.fleet.view import GIB_PER_GB
from archform.render.targets.kubernetes.objects import fleet_objects
from archform.render.targets.kubernetes.records import FleetView
from archform.render.targets.platform.target import FLEET_SERVICE_ACCOUNT
from archform.render.writer import GeneratedFile
from archform.spec import BlueprintSet, Document
from archform.spec.deploy_timing import deploy_timing
from archform.spec.models.inference import InferenceFleet
from archform.spec.models.platform import Platform
from archform.spec.provider import spec_of

PACK = "pulumi/policy"
# pulumi-policy the generated requirements pin: the version `archform verify` evaluates with.
PINS = {"pulumi-policy": "1.21.0", "pulumi": SDK_PINS["pulumi"]}
# Node-disk allowance for the server image and the OS, GiB; an assumption the pack's
# config overrides (`imageGib`), not a measured image size.
IMAGE_ALLOWANCE_GIB = 30


def _serving_account(view: FleetView) -> str:
    """The service account the generated Deployments run as."""
    for objects in fleet_objects(view).values():
        for obj in objects:
            if obj.get("kind") == "Deployment":
                return str(obj["spec"]["template"]["spec"].get("serviceAccountName", "default"))
    return "default"


@dataclass(frozen=True, slots=True)
class ServingAccount:
    """Where the Deployments run: namespace and service account."""

    namespace: str
    service_account: str


@dataclass(frozen=True, slots=True)
class WeightsAccess:
    """The bucket a region reads weights from, and the replica bucket it writes (if any)."""

    bucket: str
    replica: str | None


@dataclass(frozen=True, slots=True)
class StartupExpect:
    """What a model server's startup budget is made of (spec/data/deploy_timing.yaml)."""

    weights_gib: float
    object_store_mb_per_s: float
    image_pull_s: int
    node_provision_s: int
    default_await_s: int
    max_replicas: int


@dataclass(frozen=True, slots=True)
class PolicyExpect:
    """What a program must hold (the pack's EXPECT literal, in this field order)."""

    program: str
    kind: str
    provider: str
    k8s_version: str
    deployer_cidrs: list[str]
    serving: ServingAccount
    weights: dict[str, WeightsAccess]
    gpus_per_node: int
    image_gib: int
    startup: StartupExpect | None = None
    # GiB of instance store a GPU node's kubelet uses when the program puts it there
    # (EKS nodeadm localStorage RAID0; catalog local NVMe), else 0.
    instance_store_gib: float = 0.0
    # The blueprint opted its public entry point out of TLS (edge.protocol: http, lint
    # SEC004): the edge-listener-tls policy then accepts plain HTTP listeners.
    plain_http_edge: bool = False


def fleet_expect(fleet: InferenceFleet) -> PolicyExpect:
    """What the fleet program must hold, from the blueprint."""
    view = fleet_data(fleet)
    timing = deploy_timing()
    return PolicyExpect(
        program=fleet.name,
        kind="fleet",
        provider=view.provider,
        k8s_version=view.k8s_version,
        # the deployer's own ranges when the blueprint names them (kubernetes.deployer)
        deployer_cidrs=list(view.deployer.cidrs or fleet.kubernetes.api_access_cidrs),
        serving=ServingAccount(namespace=fleet.name, service_account=_serving_account(view)),
        weights={
            r.name.lower(): WeightsAccess(bucket=r.weights_bucket, replica=r.replica_bucket)
            for r in view.regions
        },
        gpus_per_node=view.gpus_per_node,
        image_gib=IMAGE_ALLOWANCE_GIB,
        startup=StartupExpect(
            weights_gib=view.model.weights_gib,
            object_store_mb_per_s=timing.object_store_mb_per_s,
            image_pull_s=timing.image_pull_s,
            node_provision_s=timing.node_provision_s,
            default_await_s=timing.default_await_s,
            max_replicas=view.replicas.max,
        ),
        instance_store_gib=round(view.capacity.local_nvme_gib * GIB_PER_GB, 1)
        if view.capacity.cache_on_local_nvme
        else 0.0,
        plain_http_edge=view.edge.public and not view.edge.tls,
    )


def registry_expect(platform: Platform, fleet: InferenceFleet) -> PolicyExpect:
    """What the Platform's registry program must hold."""
    return PolicyExpect(
        program=f"{platform.name}-registry",
        kind="registry",
        provider=platform.registry.provider,
        k8s_version=fleet.kubernetes.version,
        deployer_cidrs=list(fleet.kubernetes.api_access_cidrs),
        serving=ServingAccount(namespace=fleet.name, service_account=FLEET_SERVICE_ACCOUNT),
        weights={"*": WeightsAccess(bucket=platform.registry.bucket, replica=None)},
        gpus_per_node=0,
        image_gib=IMAGE_ALLOWANCE_GIB,
    )


SETTINGS_MODULE = "pack_settings.py"


CLOUD_FILE = "policy/cloud.py"


def cloud_modules(clouds: list[str]) -> list[tuple[str, str]]:
    """(pack module name, environment file) of each cloud's policy module, in registry order.

    A provider without templates/policy/cloud.py adds none: the shared policies still run
    (Kubernetes objects, await budgets, credentials), with no cloud resource type to read.
    """
    out = []
    for name in providers.names():
        if name in clouds and providers.templates(name) is not None:
            file = provider_template(name, CLOUD_FILE)
            if exists(file):
                out.append((f"cloud_{name.replace('-', '_')}", file))
    return out


def pack_files(expect: PolicyExpect, clouds: list[str]) -> list[GeneratedFile]:
    """The pack's files for one program whose resources live in `clouds`.

    The policy code (__main__.py, policies.py, policy_core.py and each cloud's module) is
    shipped verbatim; what varies per program is pack_settings.py (PACK_NAME, CLOUDS,
    EXPECT), rendered like a Pulumi program's settings.py.
    """
    pack_name = f"{expect.program}-invariants"
    modules = cloud_modules(clouds)
    ctx = {"expect": expect, "pack_name": pack_name, "pins": PINS}
    rows = [
        SettingRow("PACK_NAME", pack_name),
        SettingRow("CLOUDS", [module for module, _ in modules]),
        SettingRow("EXPECT", plain(expect)),
    ]
    settings = render("pulumi/common/settings.py.j2", {"settings": rows})
    files = [GeneratedFile.text(f"{PACK}/{n}", render(f"policy/{n}.j2", ctx)) for n in TEMPLATED]
    files += [GeneratedFile.text(f"{PACK}/{n}", shipped(f"policy/{n}")) for n in SHIPPED]
    files += [GeneratedFile.text(f"{PACK}/{m}.py", shipped(file)) for m, file in modules]
    files.append(GeneratedFile.text(f"{PACK}/{SETTINGS_MODULE}", settings))
    return sorted(files, key=lambda f: f.path)


TEMPLATED = ("PulumiPolicy.yaml", "requirements.txt", "README.md")
SHIPPED = ("__main__.py", "policies.py", "policy_core.py")


def _applies(doc: Document) -> bool:
    if isinstance(doc.model, InferenceFleet):
        return True
    if not isinstance(doc.model, Platform):
        return False
    return spec_of(doc.model.registry.provider).registry_scheme is not None


def _render(doc: Document, blueprints: BlueprintSet) -> list[GeneratedFile]:
    model = doc.model
    if isinstance(model, InferenceFleet):
        return pack_files(fleet_expect(model), [model.placement.provider])
    assert isinstance(model, Platform)
    found = blueprints.by_name.get(model.inference)
    if found is None or not isinstance(found.model, InferenceFleet):
        return []  # the platform target reports the missing fleet
    clouds = [model.registry.provider, found.model.placement.provider]
    return pack_files(registry_expect(model, found.model), clouds)


TARGET = Target(name="policy", applies=_applies, render=_render)
