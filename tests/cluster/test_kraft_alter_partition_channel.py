"""A KRaft leader's AlterPartition through Kafka's AlterPartitionManager and its channel to the
controller (rig.cluster.kraft.alter_partition_manager, rig.cluster.alter_partition_manager,
rig.cluster.broker_to_controller_channel): one request in flight per broker with the changes
queued meanwhile batched into the next, and a request sent again to the Raft leader the broker
knows after NOT_CONTROLLER or a crashed controller's reset. rig before 2026-11-30 sent one
request per partition and, on NOT_CONTROLLER, left the change to the next ISR check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson

from rig.cluster.kraft.alter_partition_manager import AlterPartitionManager
from rig.cluster.kraft.metadata_publisher import BrokerMetadataPublisher
from rig.cluster.log import Log
from rig.cluster.replica import Replica, Role
from rig.events import names
from rig.protocol.errors import NONE, NOT_CONTROLLER
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from tests.cluster.test_alter_isr import SCENARIO as ZK_SCENARIO
from tests.cluster.test_broker_unit import KEY
from tests.cluster.test_kraft_broker_epochs import _Plane

# ZooKeeper mode's case (tests/cluster/test_alter_isr.py) in KRaft, with a broker session that
# outlasts the leaders' lag time (the controller fences nobody first).
SCENARIO = ZK_SCENARIO.replace("zookeeper.session.timeout.ms: 30s",
                               "broker.session.timeout.ms: 60s") + """\
kafka: "3.9"
strategies: {controller: kraft}
"""


def test_one_request_in_flight_per_broker_the_rest_go_with_the_next(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    variant = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants[0]
    simulate(variant, tmp_path / "e.jsonl")
    events = [orjson.loads(line) for line in (tmp_path / "e.jsonl").read_bytes().splitlines()]
    shrinks = [(e["t_ms"], e["partition"]) for e in events
               if e["event"] == names.PARTITION_CHANGE and e["reason"] == "alter-partition"
               and 2 not in e["isr"]]
    # Leader 0 drops broker 2 from its three partitions in one isr-expiration run. The first
    # change goes at once; the two queued meanwhile go together once its answer is back
    # (DefaultAlterPartitionManager), as in ZooKeeper mode from 2.8.
    times = sorted({t for t, _ in shrinks})
    assert len(shrinks) == 3 and len(times) == 2, shrinks
    assert times[0] < times[1] < times[0] + 10
    assert sum(1 for t, _ in shrinks if t == times[1]) == 2


class _Controllers(_Plane):
    """Controller nodes 3 and 4, of which `active` answers; the wire waits for the test."""

    def __init__(self, image: BrokerMetadataPublisher, active: int) -> None:
        super().__init__(image)
        self.active = active
        self.wire: list[tuple[Any, Any, Callable[[], None]]] = []
        self.asked: list[Any] = []
        self.clients: list[Any] = []

    def watch_connections(self, client: Any) -> None:
        self.clients.append(client)

    def at_controller(self, node: Any) -> Any:
        def alter_partition(request: Any, answer: Any) -> None:
            self.asked.append(node)
            if node != self.active:
                answer(NOT_CONTROLLER, None)
            else:
                answer(NONE, SimpleNamespace(leader_epoch=request.leader_epoch,
                                             isr=request.new_isr,
                                             partition_epoch=request.partition_epoch + 1))
        return SimpleNamespace(alter_partition=alter_partition)

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Any, **kwargs: Any) -> None:
        self.wire.append((src, dst, deliver))

    def deliver(self) -> list[tuple[Any, Any]]:
        wire, self.wire = self.wire, []
        for _src, _dst, deliver in wire:
            deliver()
        return [(src, dst) for src, dst, _ in wire]

    def run_ms(self, ms: int) -> None:
        sim = self.cluster.sim
        sim.run(sim.now_us + ms * 1000)


def _leader(known: int, active: int) -> tuple[_Controllers, Any, Replica, Any]:
    image = BrokerMetadataPublisher(None, None)
    image.epoch, image.epochs, image.known = 3, {0: 3, 1: 5, 2: 4}, known
    plane = _Controllers(image, active)
    replica = Replica(KEY, 0, (0, 1, 2), Log(), 0, role=Role.LEADER)
    replica.isr = (0, 1, 2)
    sim = plane.cluster.sim
    broker = SimpleNamespace(
        id=0, incarnation=1, alive=True, now_ms=0.0, replicas={KEY: replica},
        schedule=lambda delay_us, action: sim.call_after(delay_us, action),
        replica_manager=SimpleNamespace(set_isr=lambda r, isr: setattr(r, "isr", isr)),
        config=SimpleNamespace(inter_broker_protocol_version="3.9",
                               alter_isr_takes_same_version=True,
                               hw_on_alter_isr_response=False,
                               controller_socket_timeout_ms=30_000))
    manager = AlterPartitionManager(plane)
    manager.change_isr(broker, replica, (0, 1), shrink=[2])
    return plane, image, replica, manager


def test_not_controller_sends_it_again_to_the_raft_leader_the_broker_knows() -> None:
    plane, image, replica, _ = _leader(known=3, active=4)
    assert plane.deliver() == [(0, 3)]
    assert plane.deliver() == [(3, 0)]  # NOT_CONTROLLER: disconnect, forget, ask again
    image.known = 4  # the broker's Raft client learns the new leader meanwhile
    plane.run_ms(49)
    assert plane.wire == []  # the reconnect backoff, 50 ms, for node 3 ...
    plane.run_ms(2)
    assert plane.deliver() == [(0, 3)]  # ... to which the request was bound
    plane.deliver()  # NOT_CONTROLLER again: now the provider names node 4 (no backoff there)
    assert plane.deliver() == [(0, 4)]
    plane.deliver()
    assert plane.asked == [3, 3, 4]
    assert replica.isr == (0, 1) and replica.pending_isr is None


def test_a_crashed_controller_s_reset_sends_it_again_to_the_new_leader() -> None:
    plane, image, replica, _ = _leader(known=3, active=3)
    assert [dst for _, dst, _ in plane.wire] == [3]
    plane.wire = []  # the controller's process dies with the request
    plane.active, image.known = 4, 4
    (channel,) = plane.clients
    channel.connection_reset(3)  # a round trip later, the cluster tells the channel
    assert plane.deliver() == [(0, 4)]
    plane.deliver()
    assert replica.isr == (0, 1) and replica.pending_isr is None
