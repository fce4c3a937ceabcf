"""The public edge of every fleet: HTTPS only by default, an API key on the server, Front
Door's header checked at the origin, the private blob DNS zone falling back to public DNS.

Checked on archform's generated output for every fleet case (the bundled fleets as written,
each on the two other clouds, the GCP fixture): its Kubernetes manifests and its Pulumi
program under mocks with the real provider SDKs.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

import support
from archform import providers
from archform.render.generate import build_files
from support import programs
from support.fleet_cases import Case, fleet_cases

# The middleware is shipped code in the Azure package's templates/ (no importable module).
FRONT_DOOR = Path(str(providers.templates("azure"))) / "fleet" / "archform_frontdoor.py"
_spec = importlib.util.spec_from_file_location("archform_frontdoor", FRONT_DOOR)
assert _spec is not None and _spec.loader is not None
archform_frontdoor = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(archform_frontdoor)

CASES = fleet_cases()
PUBLIC = [c for c in CASES if (f := c.load()[0]).traffic and f.traffic.global_load_balancer]
AWS_LB = "service.beta.kubernetes.io/aws-load-balancer-"
MOCK_FRONT_DOOR_ID = "00000000-0000-0000-0000-0000000000fd"  # pulumi_mock's profile output


def _files(case: Case) -> dict[str, bytes]:
    _, blueprints = case.load()
    return {f.path: f.content for f in build_files(blueprints)}  # type: ignore[arg-type]


def _objects(case: Case) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for path, content in _files(case).items():
        if path.startswith("kubernetes/"):
            obj = yaml.safe_load(content)
            found.setdefault(obj["kind"], []).append(obj)
    return found


def _run(case: Case, root: Path) -> Any:
    tree = programs.generate(case.text, root / "edge", case.id)
    (project,) = [p for p in programs.projects(tree) if (p / "fleet_objects.py").exists()]
    return programs.run(project)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.getbasetemp()


def _server(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == "server")


# --- manifests ------------------------------------------------------------------------------


@pytest.mark.parametrize("case", PUBLIC, ids=[c.id for c in PUBLIC])
def test_public_entry_point_listens_for_tls_only(case: Case) -> None:
    fleet, _ = case.load()
    objs = _objects(case)
    provider = fleet.placement.provider
    if provider == "aws":
        for svc in objs["Service"]:
            notes = svc["metadata"]["annotations"]
            # TLS ends at the NLB (Global Accelerator is layer 4) on 443, TLS 1.2+ only.
            assert svc["spec"]["ports"] == [
                {"name": "https", "port": 443, "targetPort": "http", "protocol": "TCP"}
            ]
            assert notes[AWS_LB + "ssl-ports"] == "https"
            assert notes[AWS_LB + "ssl-negotiation-policy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06"
    elif provider == "gcp":
        (gateway,) = objs["Gateway"]
        assert [(lst["protocol"], lst["port"]) for lst in gateway["spec"]["listeners"]] == [
            ("HTTPS", 443)
        ]
        certmap = gateway["metadata"]["annotations"]["networking.gke.io/certmap"]
        assert certmap == f"{fleet.name}-edge"
        (policy,) = objs["GCPGatewayPolicy"]
        assert policy["spec"]["targetRef"] == {
            "group": "gateway.networking.k8s.io",
            "kind": "Gateway",
            "name": fleet.name,
        }
        assert policy["spec"]["default"]["sslPolicy"] == f"{fleet.name}-edge-tls"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_server_requires_an_api_key_that_no_manifest_holds(case: Case) -> None:
    fleet, _ = case.load()
    objs = _objects(case)
    (deployment,) = objs["Deployment"][:1]
    server = _server(deployment)
    env = {e["name"]: e for e in server["env"]}
    assert env["VLLM_API_KEY"]["valueFrom"] == {
        "secretKeyRef": {"name": f"{fleet.name}-api-key", "key": "api-key"}
    }
    assert "Secret" not in objs  # the program creates it from a secret, never a file
    # With a key, /v1/models answers 401: probes and load balancers check /health instead.
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert server[probe]["httpGet"]["path"] == "/health"
    data = [c for p, c in _files(case).items() if p.startswith("kubernetes/") or "objects" in p]
    assert not any(b"stringData" in content or b"kind: Secret" in content for content in data)


@pytest.mark.parametrize(
    "case", [c for c in PUBLIC if c.load()[0].placement.provider == "azure"], ids=lambda c: c.id
)
def test_origin_checks_this_front_doors_id(case: Case) -> None:
    fleet, _ = case.load()
    objs = _objects(case)
    server = _server(objs["Deployment"][0])
    assert server["args"][-2:] == ["--middleware", "archform_frontdoor.front_door_only"]
    env = {e["name"]: e for e in server["env"]}
    assert env["PYTHONPATH"]["value"] == "/opt/archform"
    assert env["ARCHFORM_FRONT_DOOR_ID"]["valueFrom"] == {
        "configMapKeyRef": {"name": f"{fleet.name}-front-door", "key": "id"}
    }
    mounts = {m["mountPath"]: m["name"] for m in server["volumeMounts"]}
    check = next(c for c in objs["ConfigMap"] if c["metadata"]["name"].endswith("-check"))
    shipped = FRONT_DOOR.read_text("utf-8")
    assert check["data"] == {"archform_frontdoor.py": shipped}
    volumes = {v["name"]: v for v in objs["Deployment"][0]["spec"]["template"]["spec"]["volumes"]}
    assert volumes[mounts["/opt/archform"]]["configMap"]["name"] == check["metadata"]["name"]
    # The service-tag lock stays as well.
    (svc,) = objs["Service"][:1]
    tag = svc["metadata"]["annotations"]["service.beta.kubernetes.io/azure-allowed-service-tags"]
    assert tag == "AzureFrontDoor.Backend"


# --- the Front Door check itself --------------------------------------------------------------


def _request(path: str, fdid: str | None, method: str = "POST") -> Any:
    headers = {} if fdid is None else {"x-azure-fdid": fdid}
    return SimpleNamespace(url=SimpleNamespace(path=path), method=method, headers=headers)


def test_front_door_check_admits_only_this_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARCHFORM_FRONT_DOOR_ID", MOCK_FRONT_DOOR_ID)
    passed: list[str] = []

    async def call_next(request: Any) -> str:
        passed.append(request.url.path)
        return "served"

    def send(path: str, fdid: str | None) -> Any:
        # Its own loop: asyncio.run would unset the main thread's loop the Pulumi SDK uses.
        loop = asyncio.new_event_loop()
        try:
            request = _request(path, fdid)
            return loop.run_until_complete(archform_frontdoor.front_door_only(request, call_next))
        finally:
            loop.close()

    assert send("/v1/completions", MOCK_FRONT_DOOR_ID.upper()) == "served"
    assert send("/health", None) == "served"  # probes, the LB health check
    assert send("/metrics", None) == "served"  # Prometheus in the cluster
    assert passed == ["/v1/completions", "/health", "/metrics"]
    assert not archform_frontdoor.allowed("/v1/chat/completions", "POST", None, MOCK_FRONT_DOOR_ID)
    other = "11111111-2222-3333-4444-555555555555"  # another customer's Front Door
    assert not archform_frontdoor.allowed("/v1/models", "GET", other, MOCK_FRONT_DOOR_ID)
    # No id configured: nothing under /v1 is served (fail closed).
    assert not archform_frontdoor.allowed("/v1/models", "GET", MOCK_FRONT_DOOR_ID, "")
    support.require_module("starlette")
    response = send("/v1/completions", other)
    assert response.status_code == 403


# --- programs under mocks ---------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_program_creates_the_key_secret_before_the_servers(case: Case, root: Path) -> None:
    fleet, _ = case.load()
    run = _run(case, root)
    secrets = run.of_type("kubernetes:core/v1:Secret")
    assert len(secrets) == len(fleet.placement.all_regions)
    for secret in secrets:
        assert secret.inputs["metadata"]["name"] == f"{fleet.name}-api-key"
        assert secret.inputs["metadata"]["namespace"] == fleet.name
        assert set(secret.inputs["stringData"]) >= {"4dabf18193072939515e22adb298388d"}  # secret
    for deployment in run.of_type("kubernetes:apps/v1:Deployment"):
        region = deployment.name.split("-deployment-")[0]
        (secret,) = [s for s in secrets if s.name.startswith(f"{region}-secret-")]
        assert secret.name in run.depends_on(deployment)
    assert "api_key" in run.outputs


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize("case", PUBLIC, ids=[c.id for c in PUBLIC])
def test_program_terminates_tls_with_a_managed_certificate(case: Case, root: Path) -> None:
    fleet, _ = case.load()
    run = _run(case, root)
    provider, domain = fleet.placement.provider, fleet.edge.domain
    if provider == "aws":
        (listener,) = run.of_type("aws:globalaccelerator/listener:Listener")
        assert listener.inputs["portRanges"] == [{"fromPort": 443, "toPort": 443}]
        certs = run.of_type("aws:acm/certificate:Certificate")
        assert sorted(c.inputs["region"] for c in certs) == sorted(fleet.placement.all_regions)
        assert {(c.inputs["domainName"], c.inputs["validationMethod"]) for c in certs} == {
            (domain, "DNS")
        }
        validated = {
            v.inputs["region"]: v
            for v in run.of_type("aws:acm/certificateValidation:CertificateValidation")
        }
        for svc in run.of_type("kubernetes:core/v1:Service"):
            region = svc.name.split("-service-")[0]
            arn = svc.inputs["metadata"]["annotations"][AWS_LB + "ssl-cert"]
            assert arn == validated[region].inputs["certificateArn"]
            assert validated[region].name in run.depends_on(svc)
    elif provider == "gcp":
        (policy,) = run.of_type("gcp:compute/sSLPolicy:SSLPolicy")
        assert (policy.inputs["minTlsVersion"], policy.inputs["name"]) == (
            "TLS_1_2",
            f"{fleet.name}-edge-tls",
        )
        (entry,) = run.of_type("gcp:certificatemanager/certificateMapEntry:CertificateMapEntry")
        assert (entry.inputs["hostname"], entry.inputs["map"]) == (domain, f"{fleet.name}-edge")
        (cert,) = run.of_type("gcp:certificatemanager/certificate:Certificate")
        assert cert.inputs["managed"]["domains"] == [domain]
        (gateway,) = run.of_type("kubernetes:gateway.networking.k8s.io/v1:Gateway")
        assert entry.name in run.depends_on(gateway)
    else:
        (route,) = run.of_type("azure-native:cdn:Route")
        assert route.inputs["httpsRedirect"] == "Enabled"
        (custom,) = run.of_type("azure-native:cdn:AFDCustomDomain")
        assert custom.inputs["hostName"] == domain
        assert custom.inputs["tlsSettings"] == {
            "certificateType": "ManagedCertificate",
            "cipherSuiteSetType": "TLS12_2023",
            "minimumTlsVersion": "TLS12",
        }
        assert route.inputs["customDomains"] == [{"id": f"{custom.name}-id"}]
    assert run.outputs["global_endpoint"] == f"https://{domain}"


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize(
    "case", [c for c in PUBLIC if c.load()[0].placement.provider == "azure"], ids=lambda c: c.id
)
def test_program_hands_the_front_door_id_to_every_region(case: Case, root: Path) -> None:
    fleet, _ = case.load()
    run = _run(case, root)
    maps = [
        m
        for m in run.of_type("kubernetes:core/v1:ConfigMap")
        if m.inputs["metadata"]["name"] == f"{fleet.name}-front-door"
    ]
    assert len(maps) == len(fleet.placement.all_regions)
    assert {m.inputs["data"]["id"] for m in maps} == {MOCK_FRONT_DOOR_ID}
    for deployment in run.of_type("kubernetes:apps/v1:Deployment"):
        region = deployment.name.split("-deployment-")[0]
        (mine,) = [m for m in maps if m.name.startswith(f"{region}-")]
        assert mine.name in run.depends_on(deployment)


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.parametrize(
    "case", [c for c in CASES if c.load()[0].placement.provider == "azure"], ids=lambda c: c.id
)
def test_private_blob_zone_link_falls_back_to_public_dns(case: Case, root: Path) -> None:
    fleet, _ = case.load()
    run = _run(case, root)
    links = run.of_type("azure-native:privatedns:VirtualNetworkLink")
    replicated = fleet.model.replicate_to_regions and len(fleet.placement.all_regions) > 1
    assert links or not replicated
    for link in links:
        assert link.inputs["resolutionPolicy"] == "NxDomainRedirect"


# --- the blueprint: HTTPS needs a name; plain HTTP is an explicit opt-in -----------------------


def _without_domain(stem: str, tmp_path: Path, **edge: str) -> Path:
    text = (Path(__file__).resolve().parents[3] / "blueprints" / f"{stem}.yaml").read_text("utf-8")
    text = text.replace("edge:\n  domain: serve.sivaro.example.com\n", "")
    if edge:
        text = text.replace(
            "kind: InferenceFleet\n",
            "kind: InferenceFleet\nedge: {"
            + ", ".join(f"{k}: {v}" for k, v in edge.items())
            + "}\n",
        )
    path = tmp_path / f"{stem}.yaml"
    path.write_text(text, "utf-8")
    return path


def test_https_entry_point_without_a_domain_is_refused_at_its_line(tmp_path: Path) -> None:
    from support import run_cli

    path = _without_domain("platform-two-tier", tmp_path)
    proc = run_cli(["validate", str(path)])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = [ln for ln in proc.stderr.splitlines() if "managed certificate" in ln]
    assert line.startswith(f"{path}:")
    assert "an HTTPS entry point on aws needs the name clients use" in line
    assert "(hint: add edge: {domain: api.example.com}" in line
    assert "Traceback" not in proc.stderr


def test_plain_http_is_an_opt_in_that_lint_reports(tmp_path: Path) -> None:
    from support import run_cli

    path = _without_domain("platform-two-tier", tmp_path, protocol="http")
    assert run_cli(["validate", str(path)]).returncode == 0
    lint = run_cli(["lint", str(path), "--select", "SEC004"])
    assert "SEC004" in lint.stdout and "serves plain HTTP" in lint.stdout, lint.stdout
