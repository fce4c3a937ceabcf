"""Issue 24: provider quotas as data, checked at the blueprint line.

200 or 60,000 `ssh_cidrs` used to validate, though archform writes one ingress rule per
entry into one AWS security group, which allows 60 per address family by default.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from archform import providers
from archform.cli._app import build
from archform.spec import InferenceFleet, load_text
from archform.spec.quotas import quotas
from support import BLUEPRINTS

AWS = BLUEPRINTS / "aws-p5-efa-fsx.yaml"
ONE = "ssh_cidrs: [10.0.0.0/8]"


def _with_cidrs(tmp_path: Path, cidrs: list[str]) -> Path:
    text = AWS.read_text()
    assert ONE in text
    out = tmp_path / "bp.yaml"
    listed = "".join(f"      - {c}\n" for c in cidrs)
    out.write_text(text.replace(ONE, "ssh_cidrs:\n" + listed))
    return out


def _validate(path: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(build(["validate"]), ["validate", str(path)])
    return result.exit_code, result.output.splitlines()


def test_every_quota_has_a_default_a_way_to_raise_it_and_a_source() -> None:
    assert quotas()
    for quota in quotas().values():
        assert quota.default > 0 and quota.raise_how and quota.source.startswith("https://")


def test_aws_ssh_ranges_over_the_rule_quota_are_refused_at_the_first_over(tmp_path: Path) -> None:
    limit = quotas()[("aws", "security_group_inbound_rules")].default
    cidrs = [f"10.{i // 256}.{i % 256}.0/24" for i in range(limit + 1)]
    bp = _with_cidrs(tmp_path, cidrs)
    code, lines = _validate(bp)
    assert code == 2 and len(lines) == 1, lines
    line = next(i for i, ln in enumerate(bp.read_text().splitlines(), 1) if cidrs[limit] in ln)
    where = rf"^{re.escape(str(bp))}:{line}:\d+: error: access\.ssh_cidrs\[{limit}\]: "
    assert re.match(where, lines[0]), lines[0]
    assert f"allows {limit} inbound rules" in lines[0] and "L-0EA8095F" in lines[0]


@pytest.mark.parametrize("count", [1, 60])
def test_up_to_the_quota_per_family_validates(tmp_path: Path, count: int) -> None:
    cidrs = [f"10.0.{i}.0/24" for i in range(count)] + [f"2001:db8:{i:x}::/48" for i in range(60)]
    code, lines = _validate(_with_cidrs(tmp_path, cidrs))
    assert code == 0, lines


def test_sixty_thousand_ranges_are_one_line_fast(tmp_path: Path) -> None:
    cidrs = [f"10.{i // 256 % 256}.{i % 256}.0/28" for i in range(60_000)]
    code, lines = _validate(_with_cidrs(tmp_path, cidrs))
    assert code == 2 and len(lines) == 1 and "access.ssh_cidrs[60]" in lines[0], lines[:3]


# The published defaults, read off each vendor page (not from quotas.yaml): AWS VPC quotas
# (security groups), the EKS service quotas table, the AKS authorized IP ranges page and
# Azure's networking limits (Azure Resource Manager).
PUBLISHED = {
    ("aws", "security_group_inbound_rules"): 60,
    ("aws", "kubernetes_api_public_cidrs"): 40,
    ("azure", "kubernetes_api_public_cidrs"): 200,
    ("azure", "nsg_source_addresses"): 4000,
}
VENDOR_DOCS = (
    "https://docs.aws.amazon.com/",
    "https://learn.microsoft.com/",
    "https://cloud.google.com/",
)


def test_the_quotas_are_the_published_defaults() -> None:
    assert {key: q.default for key, q in quotas().items()} == PUBLISHED


def test_every_quota_names_the_vendor_page_it_comes_from() -> None:
    for key, quota in quotas().items():
        assert quota.source.startswith(VENDOR_DOCS), key
        assert quota.quota and quota.fix and quota.raise_how, key


def _public(n: int) -> list[str]:
    """n distinct public /24s (52.0.0.0/8 is AWS space, public in spec/data/addresses.yaml)."""
    return [f"52.{i // 256}.{i % 256}.0/24" for i in range(n)]


def _edit(source: Path, tmp_path: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert text.count(old) == 1, old
    out = tmp_path / source.name
    out.write_text(text.replace(old, new))
    return out


def _listed(key: str, indent: int, values: list[str]) -> str:
    pad = " " * indent
    return f"{key}:\n" + "".join(f"{pad}  - {v}\n" for v in values)


def _where(bp: Path, value: str) -> tuple[int, int]:
    """(line, column) of the list entry `value` in `bp`, 1-based."""
    for number, line in enumerate(bp.read_text().splitlines(), 1):
        if line.rstrip().endswith(f"- {value}"):
            return number, line.index(value) + 1
    raise AssertionError(value)


def _refused_at(bp: Path, value: str, path: str, *needles: str) -> None:
    code, lines = _validate(bp)
    assert code == 2 and len(lines) == 1, lines[:3]
    line, col = _where(bp, value)
    assert lines[0].startswith(f"{bp}:{line}:{col}: error: {path}: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


EKS = BLUEPRINTS / "inference-h100-single-region.yaml"
AKS = BLUEPRINTS / "inference-3region-a10.yaml"
API = "api_access_cidrs: [10.0.0.0/8]"


@pytest.mark.parametrize(("source", "limit"), [(EKS, 40), (AKS, 200)], ids=["eks", "aks"])
def test_public_api_ranges_up_to_the_limit_validate(
    tmp_path: Path, source: Path, limit: int
) -> None:
    # 10.0.0.0/8 stays: it covers the deployer's private CIDRs and is not on the public list.
    bp = _edit(
        source, tmp_path, API, _listed("api_access_cidrs", 2, ["10.0.0.0/8", *_public(limit)])
    )
    code, lines = _validate(bp)
    assert code == 0, lines[:3]


@pytest.mark.parametrize(("source", "limit"), [(EKS, 40), (AKS, 200)], ids=["eks", "aks"])
def test_public_api_ranges_over_the_limit_are_refused_at_the_first_over(
    tmp_path: Path, source: Path, limit: int
) -> None:
    cidrs = _public(limit + 1)
    bp = _edit(source, tmp_path, API, _listed("api_access_cidrs", 2, ["10.0.0.0/8", *cidrs]))
    # the entry over the limit is index limit + 1 (10.0.0.0/8 is index 0 and not counted)
    _refused_at(
        bp,
        cidrs[limit],
        rf"kubernetes.api_access_cidrs[{limit + 1}]",
        f"{limit + 1} ranges on the public Kubernetes API endpoint",
        f"allows {limit} ",
        "not adjustable" if source == EKS else "fixed",
    )


def test_eks_counts_the_deployers_public_egress_too(tmp_path: Path) -> None:
    # all API ranges private: the public endpoint lists only the deployer's egress CIDRs
    old = "  deployer:\n    network: tgw-0a1b2c3d4e5f60718\n    cidrs: [10.0.0.0/24]\n"
    egress = _public(41)
    bp = _edit(EKS, tmp_path, old, "  deployer:\n    " + _listed("cidrs", 4, egress))
    _refused_at(bp, egress[40], "kubernetes.deployer.cidrs[40]", "allows 40 public endpoint")
    bp = _edit(EKS, tmp_path, old, "  deployer:\n    " + _listed("cidrs", 4, egress[:40]))
    assert _validate(bp)[0] == 0


AZURE = BLUEPRINTS / "azure-nd-h100-v5.yaml"


@pytest.mark.parametrize("over", [False, True], ids=["at-limit", "over"])
def test_azure_nsg_source_addresses(tmp_path: Path, over: bool) -> None:
    cidrs = [f"10.{i // 256}.{i % 256}.0/24" for i in range(4000 + over)]
    bp = _edit(AZURE, tmp_path, ONE, _listed("ssh_cidrs", 2, cidrs))
    if not over:
        assert _validate(bp)[0] == 0
        return
    _refused_at(
        bp, cidrs[4000], "access.ssh_cidrs[4000]", "4,001 SSH ranges", "allows 4,000 source"
    )


def test_the_counted_public_ranges_are_the_ones_the_fleet_program_gets() -> None:
    from archform.render.targets.fleet.view import fleet_view
    from archform.spec.quotas import api_public_cidrs
    from support.fleet_cases import fleet_cases

    mixed = AKS.read_text().replace(API, "api_access_cidrs: [10.0.0.0/8, 52.1.0.0/16]")
    cases = [case.load()[0] for case in fleet_cases()]
    cases.append(load_text(mixed, "<mixed>").of_kind(InferenceFleet)[0].model)
    assert any(api_public_cidrs(fleet) for fleet in cases)
    for fleet in cases:
        assert api_public_cidrs(fleet) == fleet_view(fleet).api_public_cidrs, fleet.name


PUBLISHED |= {("aws", "nodes_per_node_pool"): 450, ("azure", "nodes_per_node_pool"): 1000}


def _at(bp: Path, written: str) -> tuple[int, int]:
    """(line, column) of the value of `key: value` written once in `bp`, 1-based."""
    hits = [
        (number, line.index(written) + written.index(": ") + 3)
        for number, line in enumerate(bp.read_text().splitlines(), 1)
        if written in line
    ]
    assert len(hits) == 1, (written, hits)
    return hits[0]


def _pool_refused(bp: Path, written: str, path: str, *needles: str) -> None:
    code, lines = _validate(bp)
    assert code == 2 and len(lines) == 1, lines[:3]
    line, col = _at(bp, written)
    assert lines[0].startswith(f"{bp}:{line}:{col}: error: {path}: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


EKS_MAX = "max_nodes_per_region: 8"


# The GPU pool's node group also holds the rollout headroom: maxSurge 25% of the replicas at
# the maximum, in nodes (Kubernetes rounds a percentage surge up). The H100 fleet runs 2
# replicas per p5 (8 GPUs, tensor_parallel 4): n nodes -> 2n replicas -> ceil(2n / 4) surge
# pods -> ceil(that / 2) nodes. 360 + 90 = 450 fits; 361 + 91 = 452 does not.
@pytest.mark.parametrize("nodes", [360, 361])
def test_an_eks_gpu_pool_up_to_450_nodes_per_region(tmp_path: Path, nodes: int) -> None:
    written = f"max_nodes_per_region: {nodes}"
    bp = _edit(EKS, tmp_path, EKS_MAX, written)
    if nodes == 360:
        assert _validate(bp)[0] == 0
        return
    _pool_refused(
        bp,
        written,
        "gpu_pool.max_nodes_per_region",
        "the GPU pool of each region grows to 452 nodes (91 of them for a rollout's surge pods",
        "allows 450 nodes per EKS managed node group",
        "L-BD136A63",
    )


def test_an_eks_on_demand_floor_is_a_node_group_of_its_own(tmp_path: Path) -> None:
    # spot with a floor: the floor pool (451) is over; the spot pool above it is not:
    # 600 - 451 = 149 nodes plus the headroom of 1,200 replicas (300 surge pods, 150 nodes)
    pool = "  purchase: spot\n  on_demand_floor_per_region: 451\n  fabric: ethernet\n"
    text = "  purchase: on_demand\n  fabric: ethernet\n"
    bp = _edit(EKS, tmp_path, text, pool)
    bp.write_text(bp.read_text().replace(EKS_MAX, "max_nodes_per_region: 600"))
    _pool_refused(
        bp, "on_demand_floor_per_region: 451", "gpu_pool.on_demand_floor_per_region", "451 nodes"
    )


@pytest.mark.parametrize("nodes", [448, 449])
def test_an_eks_system_pool_counts_its_headroom(tmp_path: Path, nodes: int) -> None:
    # the system node group's max_size is nodes_per_region + 2
    written = f"nodes_per_region: {nodes}"
    bp = _edit(EKS, tmp_path, "nodes_per_region: 3", written)
    if nodes == 448:
        assert _validate(bp)[0] == 0
        return
    _pool_refused(bp, written, "system_pool.nodes_per_region", "grows to 451 nodes")


# floor 4 on demand; the spot pool holds the rest plus the rollout headroom: 2 replicas per
# NV72ads A10 v5 (2 GPUs, tensor_parallel 1), so n nodes -> 2n replicas -> ceil(2n / 4) surge
# pods -> ceil(that / 2) nodes: 803 - 4 + 201 = 1,000 fits, 804 - 4 + 201 = 1,001 does not.
@pytest.mark.parametrize("nodes", [803, 804])
def test_an_aks_spot_pool_up_to_1000_nodes(tmp_path: Path, nodes: int) -> None:
    written = f"max_nodes_per_region: {nodes}"
    bp = _edit(AKS, tmp_path, "max_nodes_per_region: 40", written)
    if nodes == 803:
        assert _validate(bp)[0] == 0
        return
    _pool_refused(
        bp,
        written,
        "gpu_pool.max_nodes_per_region",
        "the spot GPU pool of each region grows to 1,001 nodes",
        "allows 1,000 nodes per AKS node pool",
        "fixed",
    )


@pytest.mark.parametrize("count", [59, 60])
def test_eks_private_api_ranges_fill_the_cluster_security_group(tmp_path: Path, count: int) -> None:
    # one rule per api_access_cidrs entry plus EKS's own inbound rule: 59 fit in 60
    cidrs = ["10.0.0.0/8", *(f"172.16.{i}.0/24" for i in range(count - 1))]
    bp = _edit(EKS, tmp_path, API, _listed("api_access_cidrs", 2, cidrs))
    if count == 59:
        assert _validate(bp)[0] == 0
        return
    _refused_at(
        bp,
        cidrs[59],
        "kubernetes.api_access_cidrs[59]",
        "61 inbound rules in each EKS cluster security group",
        "allows 60 inbound rules",
        "L-0EA8095F",
    )


def test_the_counted_pools_are_the_ones_the_fleet_program_creates() -> None:
    from archform.render.targets.fleet.view import fleet_view
    from archform.spec.quotas import SYSTEM_POOL_HEADROOM, node_pools
    from support.fleet_cases import fleet_cases

    for case in fleet_cases():
        fleet = case.load()[0]
        view = fleet_view(fleet)
        expected = [view.system_pool.nodes + SYSTEM_POOL_HEADROOM] + [p.max for p in view.gpu_pools]
        assert [p.max_nodes for p in node_pools(fleet)] == expected, case.id
    for name in ("aws", "gcp", "azure"):
        program = Path(str(providers.templates(name))) / "fleet" / "__main__.py.j2"
        assert f'["nodes"] + {SYSTEM_POOL_HEADROOM},' in program.read_text(), name


PUBLISHED |= {("gcp", "authorized_networks"): 100}
GKE = Path(__file__).resolve().parents[1] / "render" / "fleet" / "gcp-fleet.yaml"


@pytest.mark.parametrize("count", [100, 101])
def test_gke_authorized_networks_up_to_100(tmp_path: Path, count: int) -> None:
    # every api_access_cidrs entry is an authorized network, private or not
    cidrs = ["10.0.0.0/8", *(f"172.16.{i}.0/24" for i in range(count - 1))]
    bp = _edit(GKE, tmp_path, API, _listed("api_access_cidrs", 2, cidrs))
    if count == 100:
        assert _validate(bp)[0] == 0
        return
    _refused_at(
        bp,
        cidrs[100],
        "kubernetes.api_access_cidrs[100]",
        "101 authorized networks on each GKE control plane",
        "Google Cloud allows 100 authorized network CIDR ranges",
    )


# --- a quota the account has had raised ---------------------------------------------------


def _raised(bp: Path, entry: str) -> Path:
    text = bp.read_text()
    assert "\n  provider: aws\n" in text
    bp.write_text(text.replace("\n  provider: aws\n", f"\n  provider: aws\n  quotas: {entry}\n", 1))
    return bp


def test_a_raised_rule_quota_is_declared_in_placement_and_counted_against(tmp_path: Path) -> None:
    cidrs = [f"10.{i // 256}.{i % 256}.0/24" for i in range(121)]
    bp = _raised(_with_cidrs(tmp_path, cidrs[:120]), "{security_group_inbound_rules: 120}")
    assert _validate(bp)[0] == 0
    bp = _raised(_with_cidrs(tmp_path, cidrs), "{security_group_inbound_rules: 120}")
    code, lines = _validate(bp)
    assert code == 2 and len(lines) == 1, lines
    assert r"access.ssh_cidrs[120]" in lines[0], lines[0]
    assert (
        "the account's raised quota (placement.quotas.security_group_inbound_rules) allows "
        "120 inbound rules"
    ) in lines[0]


def test_the_hint_of_an_adjustable_quota_says_where_to_declare_the_raise(tmp_path: Path) -> None:
    cidrs = [f"10.0.{i}.0/24" for i in range(61)]
    code, lines = _validate(_with_cidrs(tmp_path, cidrs))
    assert code == 2, lines
    assert (
        "once raised, give the new value as placement.quotas.security_group_inbound_rules"
        in (lines[0])
    )


@pytest.mark.parametrize(
    ("entry", "needles"),
    [
        (
            "{kubernetes_api_public_cidrs: 80}",
            ("Public endpoint access CIDR ranges per cluster (40) cannot be raised",),
        ),
        (
            "{security_group_rules: 80}",
            ("'security_group_rules' is not a AWS quota", "security_group_inbound_rules"),
        ),
    ],
)
def test_a_fixed_or_unknown_quota_cannot_be_declared(
    tmp_path: Path, entry: str, needles: tuple[str, ...]
) -> None:
    bp = tmp_path / EKS.name
    bp.write_text(EKS.read_text())
    bp = _raised(bp, entry)
    code, lines = _validate(bp)
    assert code == 2 and len(lines) == 1, lines
    name = entry.strip("{}").split(":")[0]
    line = next(n for n, text in enumerate(bp.read_text().splitlines(), 1) if name in text)
    assert lines[0].startswith(f"{bp}:{line}:"), lines[0]
    assert f"placement.quotas.{name}" in lines[0], lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
