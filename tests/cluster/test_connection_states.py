"""A client's connection to a broker as its death leaves it (rig.cluster.connection_states,
Kafka's ClusterConnectionStates): a dead process's machine refuses at once; a machine without
power answers nothing, so an open connection takes a request and never answers it, and a new one
waits for a SYN-ACK until the client gives up (KIP-601's setup timeout from 2.7, the kernel's
127 s before) or a SYN finds the broker listening again."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.connection_states import OS_CONNECT_TIMEOUT_MS, ConnectionStates
from rig.engine import Simulation
from rig.scenario.profiles import profile

LATENCY_US = 500  # one way: a round trip is 1 ms


class Host:
    def __init__(self) -> None:
        self.sim = Simulation()
        cuts: dict[tuple[Any, Any], int] = {}
        self.network = SimpleNamespace(
            base_link=lambda a, b: SimpleNamespace(latency_us=LATENCY_US),
            round_trip_us=lambda a, b: 2 * LATENCY_US, cuts=cuts,
            blocked=lambda a, b: cuts.get((a, b), 0) > 0)
        self.brokers: dict[int, Any] = {0: SimpleNamespace(alive=True, machine_down=False)}

    def lose_power(self) -> None:
        self.brokers[0].alive, self.brokers[0].machine_down = False, True

    def crash(self) -> None:
        self.brokers[0].alive, self.brokers[0].machine_down = False, False

    def restart(self) -> None:
        self.brokers[0].alive, self.brokers[0].machine_down = True, False

    def cut(self, on: bool = True) -> None:
        """A network partition between the client and broker 0 (both directions), or its
        heal."""
        for pair in (("client", 0), (0, "client")):
            if on:
                self.network.cuts[pair] = 1
            else:
                self.network.cuts.pop(pair, None)


def states(host: Host, kafka: str, seed: int = 1) -> ConnectionStates:
    release = profile(kafka)
    return ConnectionStates(host, "client", release.connection_setup_timeout_ms,
                            release.connection_setup_timeout_max_ms, random.Random(seed))


class Outcomes:
    """When each attempt ended, and how."""

    def __init__(self, host: Host):
        self.host = host
        self.seen: list[tuple[str, float]] = []

    def connected(self) -> None:
        self.seen.append(("connected", self.host.sim.now_us / 1000))

    def failed(self) -> None:
        self.seen.append(("failed", self.host.sim.now_us / 1000))


def test_a_live_process_takes_the_request_at_once() -> None:
    host = Host()
    conns, out = states(host, "2.4"), Outcomes(host)
    assert conns.writable(0, out.connected, out.failed)
    assert conns.open == {0}


def test_a_dead_process_on_a_running_machine_refuses_a_round_trip_later() -> None:
    host = Host()
    conns, out = states(host, "3.9"), Outcomes(host)
    conns.writable(0, out.connected, out.failed)
    host.crash()
    assert not conns.writable(0, out.connected, out.failed)
    host.sim.run(10_000_000)
    assert out.seen == [("failed", 1.0)]
    assert conns.open == set() and conns.failed == {0: 1}


def test_a_connection_open_before_the_power_loss_takes_a_request_it_never_answers() -> None:
    host = Host()
    conns, out = states(host, "2.4"), Outcomes(host)
    conns.writable(0, out.connected, out.failed)
    host.lose_power()
    assert conns.writable(0, out.connected, out.failed)  # written: the request times out
    conns.disconnected(0)  # (its request timed out: the client closes it)
    assert not conns.writable(0, out.connected, out.failed)  # a new connection now


def test_before_2_7_a_new_connection_waits_for_the_kernel_to_give_up_at_127_s() -> None:
    host = Host()
    host.lose_power()
    conns, out = states(host, "2.4"), Outcomes(host)
    assert not conns.writable(0, out.connected, out.failed)
    host.sim.run(200_000_000)
    assert out.seen == [("failed", OS_CONNECT_TIMEOUT_MS)]


@pytest.mark.parametrize(("back_at_s", "connected_at_ms"),
                         [(0.5, 1_001), (2, 3_001), (20, 31_001), (40, 63_001)])
def test_a_syn_sent_again_finds_the_broker_listening_again(back_at_s: float,
                                                           connected_at_ms: float) -> None:
    # SYNs leave at 0, 1, 3, 7, 15, 31 and 63 s: the first after the restart connects.
    host = Host()
    host.lose_power()
    conns, out = states(host, "2.4"), Outcomes(host)
    conns.writable(0, out.connected, out.failed)
    assert not conns.writable(0, out.connected, out.failed)  # a second request waits too
    host.sim.at(int(back_at_s * 1e6), host.restart)
    host.sim.run(200_000_000)
    assert out.seen == [("connected", connected_at_ms)] * 2
    assert conns.open == {0}


@pytest.mark.parametrize(("kafka", "cap_s"), [("2.7", 127), ("2.8", 30), ("3.9", 30)])
def test_from_2_7_the_setup_timeout_doubles_with_failures_in_a_row_up_to_its_maximum(
        kafka: str, cap_s: int) -> None:
    host = Host()
    host.lose_power()
    conns, out = states(host, kafka), Outcomes(host)
    started = [0.0]

    def failed() -> None:
        out.failed()
        if len(out.seen) < 6:
            started.append(host.sim.now_us / 1000)
            conns.writable(0, out.connected, failed)

    conns.writable(0, out.connected, failed)
    host.sim.run(3_600_000_000)
    lasted_s = [(t - s) / 1000 for (_, t), s in zip(out.seen, started, strict=True)]
    for attempt, seconds in enumerate(lasted_s):
        term = min(10 * 2 ** attempt, cap_s)
        assert 0.8 * term <= seconds <= min(1.2 * term, cap_s), (attempt, lasted_s)
    assert lasted_s[0] != 10 and lasted_s[1] != 20  # drawn, ±20 %


def test_a_connection_made_or_closed_starts_the_count_again() -> None:
    host = Host()
    host.lose_power()
    conns, out = states(host, "3.9"), Outcomes(host)
    conns.writable(0, out.connected, out.failed)
    host.sim.run(15_000_000)  # the first attempt failed (8–12 s)
    assert conns.failed == {0: 1}
    conns.writable(0, out.connected, out.failed)
    host.sim.at(16_000_000, host.restart)
    host.sim.run(60_000_000)
    assert out.seen[-1][0] == "connected" and conns.failed == {}
    host.lose_power()
    conns.close(0)  # (NetworkClient.close: the replica fetcher after awaitReady gives up)
    assert conns.open == set() and conns.failed == {}


def test_a_new_connection_across_a_cut_is_made_by_the_first_syn_after_the_heal() -> None:
    # The SYN is lost like one to a machine without power: sent again 1, 3, 7 s after the
    # first; the cut heals at 5 s, the SYN of 7 s gets through (rig before 2026-11-30 made
    # the connection at once, whatever the cut).
    host = Host()
    conns, out = states(host, "3.9"), Outcomes(host)
    host.cut()
    assert not conns.writable(0, out.connected, out.failed)
    assert conns.connecting(0)
    host.sim.call_after(5_000_000, lambda: host.cut(on=False))
    host.sim.run(20_000_000)
    assert out.seen == [("connected", 7001.0)]
    assert conns.open == {0} and not conns.connecting(0)


def test_a_connection_across_a_cut_that_lasts_is_given_up_at_the_setup_timeout() -> None:
    host = Host()
    conns, out = states(host, "3.9"), Outcomes(host)
    host.cut()
    assert not conns.writable(0, out.connected, out.failed)
    host.sim.run(60_000_000)
    [(what, at_ms)] = out.seen
    assert what == "failed" and 8000 <= at_ms <= 12_000  # 10 s ± 20 %
    assert conns.failed == {0: 1}


def test_a_connection_open_before_a_cut_takes_the_request() -> None:
    host = Host()
    conns, out = states(host, "3.9"), Outcomes(host)
    assert conns.writable(0, out.connected, out.failed)
    host.cut()
    assert conns.ready_now(0) and conns.writable(0, out.connected, out.failed)


def test_a_dead_process_behind_a_cut_refuses_once_a_syn_gets_through() -> None:
    host = Host()
    conns, out = states(host, "3.9"), Outcomes(host)
    host.crash()
    host.cut()
    assert not conns.writable(0, out.connected, out.failed)
    host.sim.call_after(2_000_000, lambda: host.cut(on=False))
    host.sim.run(20_000_000)
    assert out.seen == [("failed", 3001.0)]  # the SYN of 3 s meets the reset

