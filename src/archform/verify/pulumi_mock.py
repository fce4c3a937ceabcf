"""Run a generated Pulumi Python program in-process under `pulumi.runtime.set_mocks`.

No Pulumi CLI and no credentials: the real provider SDK classes build every resource
(so wrong argument names or types fail), and a recorder captures type, name and inputs.
Provider-computed outputs are filled with deterministic placeholders.
"""

from __future__ import annotations

import json
import runpy
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from archform.verify.provider import mock_call as provider_call
from archform.verify.provider import mock_outputs as provider_outputs


@dataclass(frozen=True, slots=True)
class MockResource:
    """One registered resource."""

    type: str
    name: str
    inputs: dict[str, Any]
    provider: str
    urn: str = ""
    dependencies: tuple[str, ...] = ()  # URNs: depends_on plus the resources of its inputs
    parent: str = ""
    # customTimeouts as registered ("create"/"update"/"delete" -> seconds; absent: none set)
    custom_timeouts: tuple[tuple[str, float], ...] = ()


@dataclass(slots=True)
class MockRun:
    """What a program registered and exported."""

    project: str
    resources: list[MockResource] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    # Violations of the policy pack beside the program ({policy, message, urn}); None when
    # it was not evaluated.
    violations: list[dict[str, str]] | None = None

    def of_type(self, type_token: str) -> list[MockResource]:
        """Resources of one type token (e.g. 'aws:ec2/launchTemplate:LaunchTemplate')."""
        return [r for r in self.resources if r.type == type_token]

    def named(self, name: str) -> MockResource:
        """The resource with this logical name."""
        return next(r for r in self.resources if r.name == name)

    def depends_on(self, resource: MockResource) -> set[str]:
        """Logical names of everything `resource` waits for, directly or transitively."""
        by_urn = {r.urn: r for r in self.resources}
        seen: set[str] = set()
        todo = list(resource.dependencies)
        while todo:
            urn = todo.pop()
            if urn in seen:
                continue
            seen.add(urn)
            if urn in by_urn:
                todo.extend(by_urn[urn].dependencies)
        return {urn.rsplit("::", 1)[-1] for urn in seen}

    def counts(self) -> dict[str, int]:
        """Resource count per type, sorted by type."""
        out: dict[str, int] = {}
        for r in self.resources:
            out[r.type] = out.get(r.type, 0) + 1
        return dict(sorted(out.items()))


class MockProgramError(Exception):
    """The program failed under mocks (wrong argument, type error, exception)."""


def _plain(value: Any) -> Any:
    try:
        return json.loads(json.dumps(value, default=str, sort_keys=True))
    except (TypeError, ValueError):
        return str(value)


def _computed(type_token: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Placeholder provider outputs, deterministic from the resource name."""
    out = dict(inputs)
    ident = f"{name}-id"
    out.setdefault("id", ident)
    out.setdefault("arn", f"arn:mock:{type_token.split(':')[0]}::000000000000:{name}")
    out.setdefault("name", inputs.get("name", name))
    out.setdefault("dnsName", f"{name}.mock.internal")
    out.setdefault("mountName", "mockfs")
    out.setdefault("privateIp", "10.0.0.10")
    out.setdefault("selfLink", f"https://mock/{name}")
    out.setdefault("endpoint", f"https://{name}.mock.internal")
    out.setdefault("kubeconfig", "apiVersion: v1\nkind: Config\n")
    extra = _TYPE_OUTPUTS.get(type_token) or provider_outputs().get(type_token)
    if extra is not None:
        out.update(extra(name, inputs))
    return out


def _seconds(duration: str) -> float:
    """A Go duration as the SDK sends customTimeouts ("90s", "1h30m", "2m") in seconds."""
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0}
    for char in duration.strip():
        if char.isdigit() or char == ".":
            number += char
        elif char in units and number:
            total += float(number) * units[char]
            number = ""
        else:
            raise ValueError(f"unsupported duration {duration!r}")
    return total + (float(number) if number else 0.0)


def _timeouts(request: Any) -> tuple[tuple[str, float], ...]:
    if not request.HasField("customTimeouts"):
        return ()
    found = request.customTimeouts
    return tuple(
        (key, _seconds(getattr(found, key)))
        for key in ("create", "update", "delete")
        if getattr(found, key)
    )


# Provider-computed outputs that generated programs read, per type token;
# deterministic placeholders.
_TYPE_OUTPUTS: dict[str, Any] = {
    "kubernetes:core/v1:Service": lambda name, inputs: {
        "status": {"loadBalancer": {"ingress": [{"hostname": f"{name}.lb.mock.internal"}]}}
    },
}


def _keep_pickler() -> Callable[[], None]:
    """Undo what the SDK's dynamic providers leave on the pure-Python pickler.

    pulumi.dynamic.serialize_provider replaces ``pickle._Pickler._batch_setitems`` with a
    wrapper of the one it finds and never restores it (pulumi/dynamic/dynamic.py, 3.x), so
    each dynamic resource serialized in a process adds one call level: a few hundred mocked
    runs in one test process end in RecursionError. A real `pulumi up` serializes each
    resource once per process, far below that; here the pickler is put back after a run.
    """
    import pickle

    saved = (pickle._Pickler._batch_setitems, pickle._Pickler.save_dict)  # type: ignore[attr-defined]

    def restore() -> None:
        pickle._Pickler._batch_setitems, pickle._Pickler.save_dict = saved  # type: ignore[attr-defined]

    return restore


def run_program(
    project_dir: Path,
    config: dict[str, str] | None = None,
    stack: str = "mock",
    calls: Mapping[str, Callable[[dict[str, Any]], Any]] | None = None,
) -> MockRun:
    """Execute `project_dir/__main__.py` under mocks; return what it registered.

    `calls` answers invokes by token (e.g. ``aws:s3/getObject:getObject``) from the
    invoke's arguments, before the built-in answers: a result dict, or (result, [(property,
    reason), ...]) for a failed invoke, as the SDK's Mocks.call. Without one, an unknown
    invoke returns nothing.
    """
    import pulumi
    import pulumi.runtime
    from pulumi.runtime.mocks import MockMonitor

    project_dir = project_dir.resolve()
    meta = (project_dir / "Pulumi.yaml").read_text("utf-8")
    project = next(
        (
            ln.split(":", 1)[1].strip().strip("'\"")
            for ln in meta.splitlines()
            if ln.startswith("name:")
        ),
        project_dir.name,
    )
    run = MockRun(project)
    # RegisterResource runs on the SDK's executor threads and calls `new_resource` on the same
    # thread before it returns: one slot per thread keeps concurrent registrations apart.
    local = threading.local()

    class Monitor(MockMonitor):
        """The SDK's mock monitor, also keeping each registration's URN and dependencies."""

        def RegisterResource(self, request: Any) -> Any:
            urns = set(request.dependencies)
            for deps in request.propertyDependencies.values():
                urns.update(deps.urns)
            local.pending = {
                "urn": self.make_urn(request.parent, request.type, request.name),
                "dependencies": tuple(sorted(urns)),
                "parent": str(request.parent or ""),
                "timeouts": _timeouts(request),
            }
            return super().RegisterResource(request)  # type: ignore[no-untyped-call]

    class Recorder(pulumi.runtime.Mocks):
        def new_resource(self, args: Any) -> tuple[str, dict[str, Any]]:
            inputs = _plain(args.inputs)
            pending: dict[str, Any] = getattr(local, "pending", {})
            local.pending = {}
            run.resources.append(
                MockResource(
                    args.typ,
                    args.name,
                    inputs,
                    str(args.provider or ""),
                    pending.pop("urn", ""),
                    pending.pop("dependencies", ()),
                    pending.pop("parent", ""),
                    pending.pop("timeouts", ()),
                )
            )
            state = _computed(args.typ, args.name, inputs)
            return f"{args.name}-id", state

        def call(self, args: Any) -> Any:
            token = str(args.token)
            if calls and token in calls:
                return calls[token](_plain(args.args))
            answer = provider_call(token, _plain(args.args))
            if answer is not None:
                return answer
            if token.endswith("getAvailabilityZones"):
                return {"names": ["zone-a", "zone-b", "zone-c"], "zoneIds": ["z1", "z2", "z3"]}
            if token.endswith("getCallerIdentity"):
                return {"accountId": "000000000000", "arn": "arn:mock", "userId": "mock"}
            if token.endswith("getRegion"):
                return {"name": "mock-region", "region": "mock-region"}
            return {}

    recorder = Recorder()
    pulumi.runtime.set_mocks(
        recorder, project=project, stack=stack, preview=False, monitor=Monitor(recorder)
    )
    full = {k if ":" in k else f"{project}:{k}": v for k, v in (config or {}).items()}
    pulumi.runtime.set_all_config(full)
    before = set(sys.modules)
    sys.path.insert(0, str(project_dir))

    # The SDK's root stack outlives set_mocks, so exports of an earlier run in this process
    # would leak into this one: record this program's exports ourselves.
    exported: dict[str, Any] = {}
    real_export = pulumi.export

    def _export(name: str, value: Any) -> None:
        exported[name] = value
        real_export(name, value)

    @pulumi.runtime.test  # type: ignore[untyped-decorator]
    def _program() -> Any:
        runpy.run_path(str(project_dir / "__main__.py"), run_name="__main__")
        return pulumi.Output.from_input(exported).apply(lambda v: run.outputs.update(_plain(v)))

    pulumi.export = _export
    restore_pickler = _keep_pickler()
    try:
        _program()
    except Exception as exc:
        raise MockProgramError(f"{type(exc).__name__}: {exc}") from exc
    finally:
        restore_pickler()
        pulumi.export = real_export
        sys.path.remove(str(project_dir))
        for mod in set(sys.modules) - before:
            module = sys.modules.get(mod)
            origin = str(getattr(module, "__file__", "") or "")
            if origin.startswith(str(project_dir)):
                del sys.modules[mod]
    return run
