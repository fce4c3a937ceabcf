"""Address arithmetic: public shares computed from block sizes published in the RFCs."""

from __future__ import annotations

import ipaddress
from importlib import resources

import pytest
from ruamel.yaml import YAML

from archform.spec.addresses import exposure, merge, percent, public_addresses

# Sizes of the non-public IPv4 blocks below 128.0.0.0, from their prefix lengths:
# 0.0.0.0/8, 10.0.0.0/8, 127.0.0.0/8 (2**24 each) and 100.64.0.0/10 (RFC 6598, 2**22).
LOW_HALF_PUBLIC = 2**31 - 3 * 2**24 - 2**22
# Above it: 169.254/16, 172.16/12, 192.0.0/24, 192.0.2/24, 192.168/16, 198.18/15,
# 198.51.100/24, 203.0.113/24, 224/4 (multicast), 240/4 (reserved).
HIGH_HALF_PUBLIC = 2**31 - (2**16 + 2**20 + 4 * 2**8 + 2**16 + 2**17 + 2 * 2**28)


def test_ipv4_public_space_matches_block_sizes() -> None:
    (whole,) = exposure(["0.0.0.0/0"])
    assert whole.total == LOW_HALF_PUBLIC + HIGH_HALF_PUBLIC
    assert whole.public == whole.total and whole.share == 1.0


def test_halves_are_the_whole_internet_and_each_half_is_counted_by_its_blocks() -> None:
    (both,) = exposure(["0.0.0.0/1", "128.0.0.0/1"])
    assert both.share == 1.0
    assert public_addresses("0.0.0.0/1") == LOW_HALF_PUBLIC
    assert public_addresses("128.0.0.0/1") == HIGH_HALF_PUBLIC


def test_overlapping_ranges_count_once() -> None:
    (e,) = exposure(["8.0.0.0/8", "8.8.0.0/16", "8.0.0.0/8"])
    assert e.public == 2**24


@pytest.mark.parametrize("cidr", ["2000::/3", "::/0", "2000::/4\n3000::/4"])
def test_ipv6_global_unicast_is_the_whole_ipv6_internet(cidr: str) -> None:
    (e,) = exposure(cidr.split("\n"))
    assert e.version == 6 and e.share == 1.0
    # 2000::/3 minus 2001::/23, 2001:db8::/32 (above 2001:1ff::, so disjoint) and 3fff::/20.
    assert e.total == 2**125 - 2**105 - 2**96 - 2**108


@pytest.mark.parametrize(
    "cidr",
    ["10.0.0.0/8", "fd00::/8", "fc00::/7", "fe80::/10", "2001:db8::/32", "224.0.0.0/3"],
)
def test_private_and_reserved_ranges_admit_no_public_address(cidr: str) -> None:
    assert public_addresses(cidr) == 0


def test_families_are_reported_separately() -> None:
    got = {e.family: e.ranges for e in exposure(["10.0.0.0/8", "8.8.8.0/24", "2a00::/12"])}
    assert got == {"IPv4": ("8.8.8.0/24",), "IPv6": ("2a00::/12",)}


def test_data_blocks_are_not_global_per_cpython() -> None:
    # An independent copy of the IANA registries: CPython's ipaddress tables (3.11 predates
    # RFC 9637, so 3fff::/20 is checked against the RFC instead).
    text = resources.files("archform.spec").joinpath("data/addresses.yaml").read_text("utf-8")
    data = YAML(typ="safe").load(text)
    for family in ("ipv4", "ipv6"):
        for block in data[family]["not_public"]:
            if block == "3fff::/20":
                continue
            net = ipaddress.ip_network(block)
            assert not net.network_address.is_global or net.is_multicast, block


def test_merge_joins_adjacent_intervals() -> None:
    assert merge([(5, 9), (0, 4), (20, 30), (25, 26)]) == [(0, 9), (20, 30)]


@pytest.mark.parametrize(
    ("share", "text"),
    [
        (1.0, "100%"),
        (0.0, "0%"),
        (0.5, "50.0%"),
        (2**22 / 3702258688, "0.113%"),
        (1e-9, "0.000000100%"),
        (0.99999999, "99.999999%"),
    ],
)
def test_percent_never_rounds_to_the_ends(share: float, text: str) -> None:
    assert percent(share) == text
