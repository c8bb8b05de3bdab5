"""Clients with a rack (client.rack): the network's cross-rack link settings apply to them."""

from __future__ import annotations

import random

from rig.cluster.network import Network
from rig.scenario.model import ConsumerSpec, LinkSpec, NetworkSpec

SAME = LinkSpec(100, 1e9)
CROSS = LinkSpec(1000, 1e8)


def _network() -> Network:
    return Network(NetworkSpec(SAME, CROSS), {0: "a", 1: "b"}, random.Random(1))


def test_a_client_without_a_rack_uses_the_same_rack_link() -> None:
    net = _network()
    assert net.base_link("producer-p", 1) == SAME
    assert net.base_link(0, 1) == CROSS


def test_a_placed_client_uses_the_cross_rack_link_to_other_racks_only() -> None:
    net = _network()
    assert net.base_link("consumer-g-0", 1) == SAME  # cached before it is placed
    net.place("consumer-g-0", "a")
    assert net.base_link("consumer-g-0", 0) == SAME
    assert net.base_link("consumer-g-0", 1) == CROSS
    assert net.base_link(1, "consumer-g-0") == CROSS
    assert net.base_link("consumer-g-0", "zk") == SAME


def test_group_members_take_the_racks_in_turn() -> None:
    spec = ConsumerSpec("g", "t", members=4, racks=("a", "b", "c"))
    assert [spec.rack_of(i) for i in range(4)] == ["a", "b", "c", "a"]
    assert ConsumerSpec("g", "t").rack_of(0) is None
