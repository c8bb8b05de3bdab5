"""What TCP does with a message a network partition drops (rig.cluster.transport): sent again
when the connection's retransmission timeout fires (200 ms, doubling), in the order the
connection carried it, and gone with the connection once its client has waited 30 s or an end
restarted."""

from __future__ import annotations

import random
from dataclasses import dataclass

from rig.cluster.network import Network
from rig.cluster.transport import Transport
from rig.engine import Simulation
from rig.scenario.model import LinkSpec, NetworkSpec


@dataclass
class Node:
    id: int
    alive: bool = True
    stalled: bool = False
    incarnation: int = 0


def _wire() -> tuple[Simulation, Network, Transport, dict[int, Node], list[tuple[str, int]]]:
    link = LinkSpec(latency_us=1000, bandwidth_bytes_per_s=1e9)
    sim = Simulation()
    network = Network(NetworkSpec(same_rack=link, cross_rack=link), {}, random.Random(0))
    nodes = {0: Node(0), 1: Node(1)}
    transport = Transport(sim, network, nodes, (), lambda node: True)
    got: list[tuple[str, int]] = []
    return sim, network, transport, nodes, got


def _send(sim: Simulation, transport: Transport, got: list[tuple[str, int]], name: str) -> None:
    transport.send(0, 1, 100, lambda: got.append((name, sim.now_us)))


def test_what_a_cut_dropped_goes_again_in_the_order_it_was_sent() -> None:
    sim, network, transport, _, got = _wire()
    sim.at(0, lambda: _send(sim, transport, got, "z"))        # arrives at 1 ms: cut by then
    sim.at(500, lambda: network.cut(0, 1, True))
    sim.at(600, lambda: _send(sim, transport, got, "a"))      # in flight when z is dropped
    sim.at(1_200, lambda: _send(sim, transport, got, "b"))    # sent after: queued behind
    sim.at(300_000, lambda: network.cut(0, 1, False))         # healed at 300 ms
    sim.run(2_000_000)
    # Sent again at 200 ms (still cut), then 400 ms later: at 600 ms, through, in order.
    assert [name for name, _ in got] == ["z", "a", "b"]
    assert all(600_000 < t < 602_000 for _, t in got), got


def test_a_cut_longer_than_the_request_timeout_drops_the_connection() -> None:
    sim, network, transport, _, got = _wire()
    sim.at(0, lambda: network.cut(0, 1, True))
    sim.at(10, lambda: _send(sim, transport, got, "old"))
    sim.at(40_000_000, lambda: network.cut(0, 1, False))
    sim.at(41_000_000, lambda: _send(sim, transport, got, "new"))
    sim.run(60_000_000)
    # The client closed the connection at 30 s: "old" is gone, "new" goes on a new one.
    assert [name for name, _ in got] == ["new"]


def test_a_restart_at_either_end_drops_what_waits() -> None:
    sim, network, transport, nodes, got = _wire()
    sim.at(0, lambda: network.cut(0, 1, True))
    sim.at(10, lambda: _send(sim, transport, got, "before"))
    sim.at(1_000, lambda: setattr(nodes[1], "incarnation", 1))
    sim.at(100_000, lambda: network.cut(0, 1, False))
    sim.run(5_000_000)
    assert got == []


def _send_reliably(sim: Simulation, transport: Transport, got: list[tuple[str, int]],
                   name: str) -> None:
    transport.send(0, 1, 100, lambda: got.append((name, sim.now_us)), reliable=True)


def test_controller_requests_arrive_in_the_order_they_were_sent() -> None:
    """The controller's channel to a broker sends its requests one after another
    (ControllerChannelManager's RequestSendThread), so a broker never applies an older
    UpdateMetadata after a newer one. Each reliable message is tried again every 100 ms from
    when it was lost: "b", lost 50 ms after "a", gets through first once the cut heals, and
    waits for "a" (found by rig fuzz: a leader kept the live brokers of the older
    UpdateMetadata, and never took the restarted follower back into the ISR, KIP-841)."""
    sim, network, transport, _, got = _wire()
    sim.at(0, lambda: network.cut(0, 1, True))
    sim.at(0, lambda: _send_reliably(sim, transport, got, "a"))     # tried again at 101, 202 ms
    sim.at(50_000, lambda: _send_reliably(sim, transport, got, "b"))  # … at 151 ms: through
    sim.at(120_000, lambda: network.cut(0, 1, False))
    sim.run(1_000_000)
    assert [name for name, _ in got] == ["a", "b"]
    assert got[0][1] == got[1][1] and 203_000 <= got[0][1] < 204_000, got


def test_reliable_messages_of_a_restarted_end_start_a_new_sequence() -> None:
    sim, network, transport, nodes, got = _wire()
    sim.at(0, lambda: network.cut(0, 1, True))
    sim.at(0, lambda: _send_reliably(sim, transport, got, "lost"))  # its receiver restarts
    sim.at(10_000, lambda: setattr(nodes[1], "incarnation", 1))
    sim.at(20_000, lambda: network.cut(0, 1, False))
    sim.at(30_000, lambda: _send_reliably(sim, transport, got, "new"))
    sim.run(1_000_000)
    assert [name for name, _ in got] == ["new"]


def test_a_reliable_message_a_cut_holds_back_is_filed_in_the_ledger_once() -> None:
    sim, network, transport, _, got = _wire()
    sim.at(0, lambda: network.cut(0, 1, True))
    sim.at(10, lambda: transport.send(0, 1, 100, lambda: got.append(("r", sim.now_us)),
                                      reliable=True))
    sim.at(1_000_000, lambda: network.cut(0, 1, False))
    sim.run(5_000_000)
    # Tried again every 100 ms through the cut and delivered after the heal: 100 bytes, one
    # message on the wire (rig before 2026-11-30 filed each of the ten tries).
    assert [name for name, _ in got] == ["r"]
    assert transport.traffic[(0, 1, "control")] == [100, 1]
