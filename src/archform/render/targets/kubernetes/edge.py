"""What the model server itself enforces at the edge: the API key and Front Door's header.

The API key comes from a Secret the fleet program creates (from the `apiKey` secret stack
config, or generated once and kept in the stack's state); no manifest holds it. On Azure
behind Front Door, the server also refuses API requests that do not carry this fleet's
profile id in X-Azure-FDID (fleet/archform_frontdoor.py, shipped in the templates/ of the
provider whose entry checks the header); the id is the profile's
`frontDoorId` output, written by the program into the ConfigMap FRONT_DOOR_ID_CONFIG names.
"""

from __future__ import annotations

from typing import Any

from archform.render.env import provider_template, shipped
from archform.render.targets.kubernetes.common import meta as _meta
from archform.render.targets.kubernetes.provider import fleet_of
from archform.render.targets.kubernetes.records import FleetView
from archform.spec.engines import engine
from archform.spec.engines.record import Engine

MODULE = "archform_frontdoor"
MIDDLEWARE = f"{MODULE}.front_door_only"
MOUNT = "/opt/archform"


def api_key_env(v: FleetView) -> list[dict[str, Any]]:
    """The server's API key from the program's Secret (key `api-key`)."""
    if v.edge.auth != "api_key":
        return []
    ref = {"name": v.edge.api_key_secret, "key": "api-key"}
    return [{"name": v.edge.api_key_env, "valueFrom": {"secretKeyRef": ref}}]


def checkov_skips(v: FleetView) -> list[str]:
    """Checkov skips the API key needs, each with its reason (`archform verify` lists them)."""
    key = engine(v.server.kind).api_key
    if v.edge.auth != "api_key" or key is None:
        return []
    return [f"CKV_K8S_35={key.checkov_reason}"]


def checks_front_door(v: FleetView) -> bool:
    """The global entry stamps an origin header the server checks (Front Door).

    Only where the engine can load the check as a middleware module (its record's
    `middleware_arg`).
    """
    hook = engine(v.server.kind).middleware_arg
    return fleet_of(v.provider).origin_header_check and v.edge.public and hook is not None


def front_door_id_config(v: FleetView) -> str:
    """The ConfigMap (key `id`) the program fills with the profile's frontDoorId."""
    return f"{v.name}-front-door"


def _check_config(v: FleetView) -> str:
    return f"{v.name}-front-door-check"


def middleware_source(v: FleetView) -> str:
    """The middleware module exactly as the fleet's provider ships it."""
    return shipped(provider_template(v.provider, f"fleet/{MODULE}.py"))


def front_door_objects(v: FleetView) -> list[dict[str, Any]]:
    """The ConfigMap holding the middleware module (none where Front Door is not used)."""
    if not checks_front_door(v):
        return []
    labels = {"app.kubernetes.io/name": v.name}
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": _meta(_check_config(v), v.name, labels),
            "data": {f"{MODULE}.py": middleware_source(v)},
        }
    ]


def server_args(v: FleetView, e: Engine) -> list[str]:
    """The server arguments that load the Front Door check (its middleware hook)."""
    if not checks_front_door(v) or e.middleware_arg is None:
        return []
    return [e.middleware_arg, MIDDLEWARE]


def server_env(v: FleetView) -> list[dict[str, Any]]:
    """The API key, and where the Front Door check finds its module and the profile id."""
    env = api_key_env(v)
    if checks_front_door(v):
        ref = {"name": front_door_id_config(v), "key": "id"}
        env += [
            {"name": "PYTHONPATH", "value": MOUNT},
            {"name": "ARCHFORM_FRONT_DOOR_ID", "valueFrom": {"configMapKeyRef": ref}},
        ]
    return env


def volumes(v: FleetView) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(pod volumes, server volume mounts) of the Front Door check."""
    if not checks_front_door(v):
        return [], []
    return (
        [{"name": "front-door-check", "configMap": {"name": _check_config(v)}}],
        [{"name": "front-door-check", "mountPath": MOUNT, "readOnly": True}],
    )
