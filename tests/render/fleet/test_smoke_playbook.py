"""The smoke-and-load playbook: lint-clean, and run for real against local model endpoints."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import support
from archform.render.targets.fleet.target import render_fleet
from archform.spec import InferenceFleet, load_paths
from support.fleet_cases import GCP_FIXTURE

pytestmark = [pytest.mark.integration]

API_KEY = "test-key-0123456789"  # what the stub server requires on /v1


def _ansible_dir(tmp_path: Path, source: Path = GCP_FIXTURE) -> Path:
    blueprints = load_paths([source])
    doc = blueprints.of_kind(InferenceFleet)[0]
    for f in render_fleet(doc, blueprints):
        if f.path.startswith("ansible/"):
            path = tmp_path / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(f.content)
    return tmp_path / "ansible"


def _env() -> dict[str, str]:
    import sys

    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_FORCE_COLOR": "0",
    }


class _Server:
    """A tiny OpenAI-style model server: /v1/models, /v1/completions (optionally failing)."""

    def __init__(self, ready: bool = True, fail_completions: bool = False) -> None:
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return

            def _reply(self, code: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                # The playbook waits on /health: /v1 needs the API key (vLLM --api-key).
                if self.path == "/health" and ready:
                    self._reply(200, {"data": [{"id": "llama-3.1-8b-instruct"}]})
                else:
                    self._reply(503, {"error": "loading"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                outer.requests += 1
                if self.headers.get("Authorization") != f"Bearer {API_KEY}":
                    self._reply(401, {"error": "Unauthorized"})
                    return
                if self.path != "/v1/completions" or fail_completions:
                    self._reply(500, {"error": "boom"})
                    return
                time.sleep(0.01)
                self._reply(200, {"model": body["model"], "choices": [{"text": "hi"}]})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def ansible_dir(tmp_path: Path) -> Iterator[Path]:
    support.require_tool("ansible-playbook", "ansible-lint")
    yield _ansible_dir(tmp_path)


def _play(
    ansible_dir: Path, endpoints: dict[str, str], *extra: str
) -> subprocess.CompletedProcess[str]:
    # As `pulumi stack output --json --show-secrets` writes them: the key beside the endpoints.
    outputs = {"endpoints": endpoints, "api_key": API_KEY}
    (ansible_dir / "endpoints.json").write_text(json.dumps(outputs))
    return subprocess.run(
        [
            "ansible-playbook",
            "-i",
            "inventory.ini",
            "smoke.yml",
            "-e",
            "@endpoints.json",
            "-e",
            "fleet_ready_retries=1",
            "-e",
            "fleet_ready_delay_s=0",
            *extra,
        ],
        cwd=ansible_dir,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_playbook_is_lint_clean_in_production_profile(ansible_dir: Path) -> None:
    proc = subprocess.run(
        ["ansible-lint", "--offline", "--profile", "production", "--strict", "smoke.yml"],
        cwd=ansible_dir,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_playbook_reports_p50_p99_for_every_region(ansible_dir: Path) -> None:
    with _Server() as a, _Server() as b:
        proc = _play(
            ansible_dir,
            {"us-central1": a.url, "europe-west4": b.url},
            "-e",
            "fleet_burst_requests=12",
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert a.requests == 12 and b.requests == 12
    assert "us-central1: p50" in proc.stdout and "europe-west4: p50" in proc.stdout
    assert "p99" in proc.stdout and "0 errors of 12" in proc.stdout


@pytest.mark.slow
def test_playbook_fails_when_requests_fail(ansible_dir: Path) -> None:
    with _Server(fail_completions=True) as a:
        proc = _play(ansible_dir, {"us-central1": a.url}, "-e", "fleet_burst_requests=4")
    assert proc.returncode != 0
    assert "misses the smoke target" in proc.stdout


@pytest.mark.slow
def test_playbook_fails_when_the_model_is_not_ready(ansible_dir: Path) -> None:
    with _Server(ready=False) as a:
        proc = _play(ansible_dir, {"us-central1": a.url})
        assert a.requests == 0
    assert proc.returncode != 0


def test_playbook_requires_endpoints(ansible_dir: Path) -> None:
    proc = subprocess.run(
        ["ansible-playbook", "-i", "inventory.ini", "smoke.yml"],
        cwd=ansible_dir,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "pulumi stack output" in proc.stdout


# --- a fleet whose origins admit only its edge: the check goes through the edge -------------


class _TlsServer(_Server):
    """The stub model server behind TLS, on `localhost` with a self-signed certificate."""

    def __init__(self, cert: Path, key: Path) -> None:
        import ssl

        super().__init__()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.host = f"localhost:{self.httpd.server_address[1]}"


def _self_signed(tmp_path: Path, name: str = "localhost") -> tuple[Path, Path]:
    support.require_tool("openssl")
    cert, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@pytest.mark.slow
def test_azure_front_door_fleet_is_checked_through_front_door(tmp_path: Path) -> None:
    """The bundled Azure fleet's load balancers admit only the AzureFrontDoor.Backend service
    tag (cloud-provider-azure `azure-allowed-service-tags`) and its servers answer /v1 only
    with this profile's X-Azure-FDID, so the deployer cannot reach a regional origin: the
    playbook, fed the generated program's own stack outputs, must check through
    `frontdoor_host` and never call a region directly."""
    support.require_tool("ansible-playbook")
    from support import BLUEPRINTS, programs

    stem = "inference-3region-a10"
    tree = programs.generate((BLUEPRINTS / f"{stem}.yaml").read_text("utf-8"), tmp_path, stem)
    outputs = dict(programs.run(tree / "pulumi").outputs)
    assert "frontdoor_host" in outputs and set(outputs["endpoints"]) == {
        "eastus",
        "westeurope",
        "southeastasia",
    }
    cert, key = _self_signed(tmp_path)
    with _Server(ready=False, fail_completions=True) as origin, _TlsServer(cert, key) as edge:
        # What the deployer meets at an origin: a server that answers nothing with 200.
        outputs["endpoints"] = {region: origin.url for region in outputs["endpoints"]}
        outputs["frontdoor_host"] = edge.host
        outputs["api_key"] = API_KEY
        (tree / "ansible" / "endpoints.json").write_text(json.dumps(outputs))
        proc = subprocess.run(
            ["ansible-playbook", "-i", "inventory.ini", "smoke.yml", "-e", "@endpoints.json",
             "-e", "fleet_ready_retries=1", "-e", "fleet_ready_delay_s=0",
             "-e", "fleet_burst_requests=6"],
            cwd=tree / "ansible", env={**_env(), "SSL_CERT_FILE": str(cert)},
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert origin.requests == 0 and edge.requests == 6
    assert "frontdoor: p50" in proc.stdout and "0 errors of 6" in proc.stdout


@pytest.mark.slow
def test_aws_tls_regions_are_checked_against_the_edge_certificate(tmp_path: Path) -> None:
    """The bundled Platform's fleet terminates TLS at each region's NLB with the ACM
    certificate of edge.domain (the Service's aws-load-balancer-ssl-cert), and its
    `endpoints` output names the NLBs' own DNS names: a check that verifies the certificate
    against the URL's host fails on every region. The playbook, fed the generated program's
    stack outputs, must verify it against the domain instead (and still verify it)."""
    support.require_tool("ansible-playbook")
    from support import BLUEPRINTS, programs

    stem = "platform-two-tier"
    tree = programs.generate((BLUEPRINTS / f"{stem}.yaml").read_text("utf-8"), tmp_path, stem)
    outputs = dict(programs.run(tree / "sivaro-serve" / "pulumi").outputs)
    regions = sorted(outputs["endpoints"])
    assert regions == ["ap-northeast-1", "eu-west-1", "us-east-1"]
    assert all(url.startswith("https://") for url in outputs["endpoints"].values())
    domain = "serve.sivaro.example.com"  # the bundled blueprint's edge.domain
    cert, key = _self_signed(tmp_path, domain)
    with _TlsServer(cert, key) as nlb:
        # The NLB's address (here localhost) is not the certificate's name.
        outputs["endpoints"] = {region: f"https://{nlb.host}" for region in regions}
        outputs["api_key"] = API_KEY
        ansible = tree / "sivaro-serve" / "ansible"
        (ansible / "endpoints.json").write_text(json.dumps(outputs))
        env = {**_env(), "SSL_CERT_FILE": str(cert)}
        proc = subprocess.run(
            ["ansible-playbook", "-i", "inventory.ini", "smoke.yml", "-e", "@endpoints.json",
             "-e", "fleet_ready_retries=1", "-e", "fleet_ready_delay_s=0",
             "-e", "fleet_burst_requests=4"],
            cwd=ansible, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert nlb.requests == 4 * len(regions)
        # Still verified: a certificate for another name is refused.
        other, other_key = _self_signed(tmp_path, "other.example.com")
        with _TlsServer(other, other_key) as wrong:
            outputs["endpoints"] = {regions[0]: f"https://{wrong.host}"}
            (ansible / "endpoints.json").write_text(json.dumps(outputs))
            bad = subprocess.run(
                ["ansible-playbook", "-i", "inventory.ini", "smoke.yml", "-e", "@endpoints.json",
                 "-e", "fleet_ready_retries=1", "-e", "fleet_ready_delay_s=0"],
                cwd=ansible, env={**env, "SSL_CERT_FILE": str(other)},
                capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            assert bad.returncode != 0 and wrong.requests == 0
