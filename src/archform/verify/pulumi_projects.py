"""Find generated Pulumi projects, give them a dry-run config, summarise what they create.

Shared by `archform plan` (in-process) and the `pulumi` verify check (one subprocess per
project: clean interpreter state, a timeout). Works for any Pulumi Python project in a tree.

Run as a module to execute one project under mocks and print the result as JSON:
``python -m archform.verify.pulumi_projects PROJECT_DIR CONFIG_JSON``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from archform.install import extra_hint
from archform.spec.provider import sdk_extras, spec_of
from archform.verify.pulumi_mock import MockResource, MockRun

# Which extra brings which SDK module (pyproject optional-dependencies); each provider's
# SDK comes with the provider's extra (`extras`).
EXTRAS = {"pulumi_kubernetes": "kubernetes"}


def extras() -> dict[str, str]:
    """SDK module -> the install extra that brings it."""
    from archform.render.public import pulumi_sdks

    out = {"pulumi": sdk_extras()[0], **EXTRAS}
    for name, package in pulumi_sdks().items():
        extra = spec_of(name).sdk_extra
        if extra is not None:
            out[package.replace("-", "_")] = extra
    return out


# Input arguments worth showing in a plan (wire names), in display order.
KEY_ARGS = (
    "instanceType",
    "machineType",
    "hardwareProfile",
    "sku",
    "strategy",
    "deploymentType",
    "perUnitStorageThroughput",
    "storageCapacity",
    "capacityGib",
    "storageCapacityTiB",
    "fileSystemTypeVersion",
    "dataRepositoryPath",
    "mtu",
    "networkProfile",
    "ipCidrRange",
    "cidrBlock",
    "groupPlacementPolicy",
    "singlePlacementGroup",
    "platformFaultDomainCount",
    "overprovision",
    "tier",
    "encrypted",
    "replicas",
)


_ERROR_TAG = "archform-mock-error: "


def find_projects(root: Path) -> list[Path]:
    """Every folder under `root` holding a Pulumi.yaml, sorted."""
    return sorted(p.parent for p in root.rglob("Pulumi.yaml") if p.is_file())


def missing_sdks(project: Path) -> list[str]:
    """Python modules the project needs (pulumi + requirements.txt) that are not installed."""
    needed = ["pulumi"]
    req = project / "requirements.txt"
    if req.is_file():
        for line in req.read_text("utf-8").splitlines():
            name = line.split("#", 1)[0].split("=", 1)[0].split(">", 1)[0].split("<", 1)[0].strip()
            if name:
                needed.append(name.replace("-", "_"))
    return [m for m in dict.fromkeys(needed) if importlib.util.find_spec(m) is None]


def install_hint(modules: list[str]) -> str:
    """The command that installs the extras holding the missing modules (archform.install)."""
    known = extras()
    return extra_hint(*sorted({known.get(m, "all") for m in modules}))


def dry_run_config(project: Path) -> tuple[dict[str, str], list[str]]:
    """Config for a dry run: Pulumi.yaml defaults, and a visible mock value for required keys.

    Returns (config, keys that got a mock value).
    """
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load((project / "Pulumi.yaml").read_text("utf-8")) or {}
    declared = data.get("config") or {}
    config: dict[str, str] = {}
    mocked: list[str] = []
    for key in sorted(declared):
        spec = declared[key]
        if isinstance(spec, dict) and "default" in spec:
            config[key] = str(spec["default"])
        elif isinstance(spec, dict):
            config[key] = f"mock-{key}"
            mocked.append(key)
        else:
            config[key] = str(spec)
    return config, mocked


def _interfaces(value: Any) -> dict[str, Any]:
    nics = [n for n in value if isinstance(n, dict)] if isinstance(value, list) else []
    types: dict[str, int] = {}
    for nic in nics:
        kind = str(nic.get("interfaceType") or nic.get("nicType") or "default")
        types[kind] = types.get(kind, 0) + 1
    cards = {n.get("networkCardIndex") for n in nics if "networkCardIndex" in n}
    out: dict[str, Any] = {"count": len(nics), "types": dict(sorted(types.items()))}
    if cards:
        out["network_cards"] = len(cards)
    return out


def _whole(value: Any) -> Any:
    """Numbers come back from the engine as floats; show 16, not 16.0."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole(v) for v in value]
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    return value


def resource_detail(resource: MockResource) -> dict[str, Any]:
    """Type, name and the key arguments of one resource (scalars and small objects)."""
    args = {
        k: _whole(resource.inputs[k])
        for k in KEY_ARGS
        if k in resource.inputs
        and not (k == "networkProfile" and isinstance(resource.inputs[k], dict))
    }
    if "networkInterfaces" in resource.inputs:
        args["networkInterfaces"] = _interfaces(resource.inputs["networkInterfaces"])
    return {"type": resource.type, "name": resource.name, "args": args}


def preview_steps(run: MockRun, stack: str = "mock") -> list[dict[str, Any]]:
    """Every registered resource with its full inputs, shaped like `pulumi preview --json` steps.

    Each step is ``{"op": "create", "urn": ..., "newState": {"type", "inputs", "provider"}}``
    (the fields of a preview step a policy engine reads), in registration order, with the URN
    the SDK's mock monitor made for it (parent-type chain included).
    """
    return [
        {
            "op": "create",
            "urn": r.urn or f"urn:pulumi:{stack}::{run.project}::{r.type}::{r.name}",
            "newState": {"type": r.type, "inputs": r.inputs, "provider": r.provider},
        }
        for r in run.resources
    ]


def summary(path: str, run: MockRun, mocked: list[str]) -> dict[str, Any]:
    """The plan of one project: counts, key arguments, full preview steps, mocked config keys."""
    return {
        "path": path,
        "steps": preview_steps(run),
        "resources": run.counts(),
        "details": sorted(
            (d for d in map(resource_detail, run.resources) if d["args"]),
            key=lambda d: (d["type"], d["name"]),
        ),
        "mock_config": mocked,
        "outputs": sorted(run.outputs),
        # How the person running `pulumi up` reaches each Kubernetes API, and as whom.
        **(
            {"deployer_access": run.outputs["deployer_access"]}
            if "deployer_access" in run.outputs
            else {}
        ),
    }


def run_in_subprocess(
    project: Path, config: dict[str, str], timeout: float = 300, policy: bool = False
) -> MockRun:
    """Run a project under mocks in a fresh interpreter; raise RuntimeError with its error.

    With `policy`, the policy pack beside the program is evaluated on the recorded graph
    too (`MockRun.violations`).
    """
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONWARNINGS"] = "ignore::DeprecationWarning"
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "archform.verify.pulumi_projects",
                str(project),
                json.dumps(config),
                *(["--policy"] if policy else []),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {timeout:.0f}s") from None
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        tagged = [ln[len(_ERROR_TAG) :] for ln in lines if ln.startswith(_ERROR_TAG)]
        raise RuntimeError((tagged or lines or [f"exit code {proc.returncode}"])[-1])
    data = json.loads(proc.stdout)
    run = MockRun(data["project"], outputs=data["outputs"], violations=data.get("violations"))
    run.resources = [
        MockResource(
            **{
                **r,
                "dependencies": tuple(r.get("dependencies", ())),
                "custom_timeouts": tuple((k, v) for k, v in r.get("custom_timeouts", ())),
            }
        )
        for r in data["resources"]
    ]
    return run


def _main(argv: list[str]) -> int:
    from archform.verify.pulumi_mock import MockProgramError, run_program

    project, config = Path(argv[0]), json.loads(argv[1])
    try:
        run = run_program(project, config)
    except MockProgramError as exc:
        sys.stderr.write(_ERROR_TAG + " ".join(str(exc).split()) + "\n")
        return 1
    violations = None
    if "--policy" in argv[2:]:
        from archform.verify.policy_pack import evaluate, load_policies, pack_of

        pack = pack_of(project)
        if pack is not None:
            try:
                found = evaluate(load_policies(pack), run.resources)
            except Exception as exc:  # a broken pack is a failed check, reported in one line
                sys.stderr.write(_ERROR_TAG + f"policy pack: {type(exc).__name__}: {exc}\n")
                return 1
            violations = [{"policy": v.policy, "message": v.message, "urn": v.urn} for v in found]
    out = {
        "project": run.project,
        "resources": [
            {
                "type": r.type,
                "name": r.name,
                "inputs": r.inputs,
                "provider": r.provider,
                "urn": r.urn,
                "dependencies": list(r.dependencies),
                "parent": r.parent,
                "custom_timeouts": [list(t) for t in r.custom_timeouts],
            }
            for r in run.resources
        ],
        "outputs": run.outputs,
        "violations": violations,
    }
    sys.stdout.write(json.dumps(out, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
