"""Links between nodes: latency plus serialization, one message at a time per directed link,
cuts that stack, degraded links, loss drawn from the run's rng, and racks."""

from __future__ import annotations

import random

import pytest

from rig.cluster.network import Network
from rig.scenario.model import LinkSpec, NetworkSpec

SAME = LinkSpec(latency_us=500, bandwidth_bytes_per_s=1_000_000)  # 1 µs per byte
CROSS = LinkSpec(latency_us=2_000, bandwidth_bytes_per_s=250_000)  # 4 µs per byte
SPEC = NetworkSpec(same_rack=SAME, cross_rack=CROSS)


class ScriptedRng(random.Random):
    """random() answers from a script; anything else the network might draw fails loudly."""

    def __init__(self, *values: float):
        super().__init__(0)
        self.values = list(values)
        self.calls = 0

    def random(self) -> float:
        self.calls += 1
        return self.values.pop(0)


def network(racks: dict[int, str | None] | None = None,
            rng: random.Random | None = None) -> Network:
    return Network(SPEC, racks if racks is not None else {0: None, 1: None, 2: None},
                   rng or ScriptedRng())


# -- latency and serialization ----------------------------------------------------------------
def test_arrival_is_serialization_plus_latency() -> None:
    net = network()
    assert net.arrival_us(0, 1, 1000, now_us=10_000) == 10_000 + 1000 + 500


def test_serialization_rounds_and_takes_at_least_a_microsecond() -> None:
    net = network()
    assert net.arrival_us(0, 1, 0, now_us=0) == 1 + 500
    net = Network(NetworkSpec(LinkSpec(0, 3_000_000), CROSS), {0: None, 1: None}, ScriptedRng())
    assert net.arrival_us(0, 1, 10, now_us=0) == 3  # 10 bytes × ⅓ µs = 3.33 → 3


def test_a_link_sends_one_message_at_a_time() -> None:
    # Like one TCP connection: a second message waits for the first to be serialized.
    net = network()
    first = net.arrival_us(0, 1, 1000, now_us=0)
    second = net.arrival_us(0, 1, 200, now_us=0)
    assert first == 1000 + 500
    assert second == 1000 + 200 + 500


def test_a_link_that_has_drained_adds_no_wait() -> None:
    net = network()
    net.arrival_us(0, 1, 1000, now_us=0)
    assert net.arrival_us(0, 1, 200, now_us=5_000) == 5_000 + 200 + 500


def test_a_busy_link_delays_neither_the_reverse_direction_nor_other_links() -> None:
    net = network()
    net.arrival_us(0, 1, 100_000, now_us=0)
    assert net.arrival_us(1, 0, 100, now_us=0) == 100 + 500
    assert net.arrival_us(0, 2, 100, now_us=0) == 100 + 500
    assert net.arrival_us(2, 1, 100, now_us=0) == 100 + 500


# -- cuts ------------------------------------------------------------------------------------
def test_cut_blocks_both_directions_of_that_pair_only() -> None:
    net = network()
    net.cut(0, "zk", True)
    assert net.blocked(0, "zk") and net.blocked("zk", 0)
    assert not net.blocked(0, 1) and not net.blocked(1, "zk")


def test_cuts_from_several_faults_stack() -> None:
    net = network()
    net.cut(0, 1, True)
    net.cut(1, 0, True)  # a second partition over the same pair, named the other way round
    net.cut(0, 1, False)
    assert net.blocked(0, 1) and net.blocked(1, 0)
    net.cut(1, 0, False)
    assert not net.blocked(0, 1) and not net.blocked(1, 0)


# -- degraded links --------------------------------------------------------------------------
def test_degrade_replaces_both_directions_and_restore_brings_the_scenario_link_back() -> None:
    net = network()
    assert net.arrival_us(0, 1, 100, now_us=0) == 100 + 500  # caches the scenario link
    slow = LinkSpec(latency_us=50_000, bandwidth_bytes_per_s=100_000)  # 10 µs per byte
    net.degrade(0, 1, slow)
    assert net.arrival_us(0, 1, 100, now_us=10_000) == 10_000 + 1000 + 50_000
    assert net.arrival_us(1, 0, 100, now_us=10_000) == 10_000 + 1000 + 50_000
    assert net.base_link(1, 0) == slow
    assert net.arrival_us(0, 2, 100, now_us=10_000) == 10_000 + 100 + 500  # others untouched
    net.degrade(0, 1, None)
    assert net.arrival_us(0, 1, 100, now_us=200_000) == 200_000 + 100 + 500
    assert net.base_link(0, 1) == SAME


def test_loss_drops_a_message_when_the_rng_draws_below_it() -> None:
    rng = ScriptedRng(0.29, 0.30, 0.95)
    net = network(rng=rng)
    net.degrade(0, 1, SAME, loss=0.3)
    assert net.arrival_us(0, 1, 100, now_us=0) is None
    assert net.arrival_us(0, 1, 100, now_us=0) == 100 + 500
    assert net.arrival_us(1, 0, 100, now_us=0) == 100 + 500
    assert rng.calls == 3


def test_a_lossless_link_never_draws_from_the_rng() -> None:
    # Randomness is a named stream of the run: a draw nobody needs would shift every later one.
    rng = ScriptedRng()  # empty: any draw raises IndexError
    net = network(rng=rng)
    for _ in range(5):
        net.arrival_us(0, 1, 100, now_us=0)
    net.degrade(0, 1, CROSS, loss=0.0)
    net.arrival_us(0, 1, 100, now_us=0)
    assert rng.calls == 0


def test_restoring_a_degraded_link_ends_its_loss() -> None:
    net = network(rng=ScriptedRng(0.0))
    net.degrade(0, 1, SAME, loss=1.0)
    assert net.arrival_us(0, 1, 100, now_us=0) is None
    net.degrade(0, 1, None)
    assert net.arrival_us(0, 1, 100, now_us=0) == 100 + 500


# -- racks -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("src", "dst"), [
    (0, 1),  # brokers without racks
    (0, "zk"),  # ZooKeeper has no rack
    ("producer-a", 1),  # nor do clients
    ("zk", "producer-a"),
])
def test_nodes_without_racks_use_the_same_rack_link(src: int | str, dst: int | str) -> None:
    net = network({0: None, 1: None})
    assert net.base_link(src, dst) == SAME
    assert net.arrival_us(src, dst, 100, now_us=0) == 100 + 500


def test_brokers_in_different_racks_use_the_cross_rack_link() -> None:
    net = network({0: "a", 1: "b", 2: "a"})
    assert net.base_link(0, 1) == CROSS
    assert net.arrival_us(0, 1, 100, now_us=0) == 400 + 2_000
    assert net.base_link(0, 2) == SAME


def test_a_racked_broker_reaches_an_unracked_node_over_the_same_rack_link() -> None:
    net = network({0: "a", 1: None})
    assert net.base_link(0, 1) == SAME
    assert net.base_link(0, "zk") == SAME
