"""The leader's view of the ISR from inter.broker.protocol.version 2.7 (KIP-497, ZooKeeper mode):
the maximal ISR while a change is pending, the controller's processAlterIsr, the HW on the
answer from 3.1 (KAFKA-13091), and the AlterIsrManager's one request in flight per broker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from rig.cluster.alter_isr import handle_response, process_alter_isr, propose
from rig.cluster.alter_isr_manager import AlterIsrManager
from rig.cluster.controller import Controller
from rig.cluster.kraft.replication_control import AlterPartitionRequest
from rig.cluster.replica import Replica
from rig.cluster.zookeeper import PartitionState
from rig.engine import Simulation
from rig.engine.rng import Streams
from rig.events import names
from rig.protocol.errors import (
    FENCED_LEADER_EPOCH,
    INELIGIBLE_REPLICA,
    INVALID_UPDATE_VERSION,
    NONE,
    NOT_CONTROLLER,
    STALE_BROKER_EPOCH,
    UNKNOWN_TOPIC_OR_PARTITION,
)
from rig.scenario.broker_config import BrokerConfig
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from tests.cluster.test_broker_unit import KEY, FakeFetcher, Fixture
from tests.cluster.test_failure_path import Host


class Proposals:
    """An ISR writer that does only the partition's side of AlterIsr (the controller answers
    when the test says)."""

    def __init__(self) -> None:
        self.sent: list[tuple[Replica, Any, tuple[int, ...]]] = []

    def change_isr(self, broker: Any, replica: Replica, isr: tuple[int, ...],
                   shrink: list[int] | None = None, expand: list[int] | None = None) -> None:
        self.sent.append((replica, propose(replica, isr, expand), isr))

    def propagate_isr_changes(self, broker: Any, keys: tuple[Any, ...]) -> None:
        raise AssertionError("no /isr_change_notification with AlterIsr")


def _at(one: Fixture, ms: int) -> None:
    one.sim.run(ms * 1000)


# -- the partition: the maximal ISR ------------------------------------------------------------
def test_a_pending_expansion_holds_the_hw_for_the_replica_it_adds() -> None:
    writer = Proposals()
    one = Fixture(isr_writer=writer, min_isr=1)  # replica.lag.time.max.ms 30 s
    _at(one, 1000)
    one.fetch(FakeFetcher(1), 0)
    one.fetch(FakeFetcher(2), 0)
    _at(one, 2000)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 1, (0, 1), 1)})  # 2 left the ISR
    one.produce(acks=1)
    one.fetch(FakeFetcher(1), 10)
    replica = one.broker.replicas[KEY]
    assert replica.high_watermark == 10
    one.produce(acks=1)  # LEO 20
    _at(one, 40_000)  # broker 2's last caught-up time (2 s) is now beyond the lag time
    one.fetch(FakeFetcher(2), 10)  # at the HW: the leader proposes to take it back
    ((proposed, pending, isr),) = writer.sent
    assert proposed is replica and isr == (0, 1, 2) and pending.expand == 2
    assert replica.isr == (0, 1) and replica.maximal_isr == (0, 1, 2)
    one.fetch(FakeFetcher(1), 20)
    # Broker 1 has everything, but the HW waits for broker 2 too (Partition
    # .maybeIncrementLeaderHW over isrState.maximalIsr): the committed ISR alone would give 20.
    assert replica.high_watermark == 10
    one.fetch(FakeFetcher(2), 20)
    assert replica.high_watermark == 20


def _shrink_proposed(config: BrokerConfig) -> tuple[Fixture, Proposals]:
    """A leader with 10 records that broker 1 has and broker 2 (stopped at 0) has not; the
    isr-expiration task proposes the shrink without broker 2."""
    writer = Proposals()
    one = Fixture(isr_writer=writer, config=config, min_isr=1)
    _at(one, 1000)
    one.fetch(FakeFetcher(1), 0)
    one.fetch(FakeFetcher(2), 0)
    one.produce(acks=1)
    one.fetch(FakeFetcher(1), 10)  # broker 2 stops fetching at 0
    _at(one, 40_000)
    one.broker.isr.expire()  # the isr-expiration task: broker 2 is out of sync
    return one, writer


@pytest.mark.parametrize(("version", "hw_on_answer"), [("3.0", False), ("3.1", True)])
def test_the_hw_moves_on_the_answer_to_a_shrink_from_3_1(version: str,
                                                          hw_on_answer: bool) -> None:
    one, writer = _shrink_proposed(BrokerConfig(version, 12,
                                                hw_on_alter_isr_response=hw_on_answer))
    ((replica, pending, isr),) = writer.sent
    assert isr == (0, 1) and pending.expand is None and replica.high_watermark == 0
    request = AlterPartitionRequest(KEY, 0, 0, 0, 0, isr)
    handle_response(one.broker, one.ctx.emit, replica, pending, request, NONE, (0, isr, 1))
    assert replica.isr == (0, 1) and replica.pending_isr is None and replica.zk_version == 1
    # KAFKA-13091: from 3.1 the leader recomputes its HW on the answer; before, only at its
    # next append or a follower fetch that moves the follower's log end (KAFKA-8841): broker
    # 1's fetch at the offset it fetched last does not.
    assert replica.high_watermark == (10 if hw_on_answer else 0)
    one.fetch(FakeFetcher(1), 10)
    assert replica.high_watermark == (10 if hw_on_answer else 0)
    one.produce(acks=1)
    assert replica.high_watermark == 10


@pytest.mark.parametrize(("version", "takes_it"), [("2.7", False), ("2.8", False),
                                                   ("3.0", True)])
def test_an_answer_at_the_leaders_own_version_is_taken_from_3_0(version: str,
                                                                 takes_it: bool) -> None:
    one, writer = _shrink_proposed(BrokerConfig(version, 12,
                                                alter_isr_takes_same_version=takes_it))
    ((replica, pending, isr),) = writer.sent
    assert isr == (0, 1) and replica.zk_version == 0
    # The controller already holds this ISR (a request sent twice): it answers with the state
    # it has, at the version the leader proposed from (processAlterIsr, equalsIgnoreZk).
    request = AlterPartitionRequest(KEY, 0, 0, 0, 0, isr)
    handle_response(one.broker, one.ctx.emit, replica, pending, request, NONE, (0, isr, 0))
    # KAFKA-12751: 2.7.0–2.8.0 compare `zkVersion <= own` and ignore it, the change pending
    # until the next LeaderAndIsr (no other ISR change meanwhile); 3.0 commits it.
    assert (replica.pending_isr is None) is takes_it
    assert replica.isr == ((0, 1) if takes_it else (0, 1, 2))
    _at(one, 80_000)
    one.broker.isr.expire()
    assert len(writer.sent) == 1
    one.broker.on_leader_and_isr(2, {KEY: PartitionState(0, 1, (0, 1), 1)})
    assert replica.pending_isr is None and replica.isr == (0, 1)


@pytest.mark.parametrize(("error", "stays_pending", "again"), [
    (FENCED_LEADER_EPOCH, True, False), (INVALID_UPDATE_VERSION, True, False),
    (UNKNOWN_TOPIC_OR_PARTITION, True, False), (STALE_BROKER_EPOCH, True, True),
    (INELIGIBLE_REPLICA, False, False)])
def test_a_rejected_change_waits_for_the_next_leader_and_isr(error: int, stays_pending: bool,
                                                              again: bool) -> None:
    writer = Proposals()
    one = Fixture(isr_writer=writer, min_isr=1)
    _at(one, 1000)
    one.fetch(FakeFetcher(1), 0)
    one.produce(acks=1)
    _at(one, 40_000)
    one.broker.isr.expire()
    ((replica, pending, isr),) = writer.sent
    request = AlterPartitionRequest(KEY, 0, 0, 0, 0, isr)
    assert handle_response(one.broker, one.ctx.emit, replica, pending, request, error,
                           None) is again
    (rejected,) = one.emitted(names.ALTER_PARTITION_REJECTED)
    assert rejected["error_code"] == error and rejected["isr"] == list(isr)
    assert (replica.pending_isr is pending) is stays_pending
    one.broker.isr.expire()
    # No new change while one is pending; INELIGIBLE_REPLICA went back to the committed ISR,
    # so the next check proposes again.
    assert len(writer.sent) == (1 if stays_pending else 2)
    one.broker.on_leader_and_isr(2, {KEY: PartitionState(0, 1, (0, 1, 2), 3)})
    assert replica.pending_isr is None  # makeLeader: CommittedIsr


# -- the controller: processAlterIsr -----------------------------------------------------------
A, B = ("t", 0), ("t", 1)


def _emitted(host: Host, name: str) -> list[dict[str, Any]]:
    return [fields for event, fields in host.events if event == name]


def _controller() -> tuple[Host, Controller, list[tuple[int, Any]]]:
    host = Host({A: (0, 1, 2), B: (1, 0, 2)}, live=[0, 1, 2])
    host.zk.partitions = {A: PartitionState(0, 3, (0, 1, 2), 5),
                          B: PartitionState(1, 2, (1, 0, 2), 4)}
    told: list[tuple[int, Any]] = []
    for b, broker in host.brokers.items():
        broker.on_update_metadata = (lambda epoch, leaders, isrs, b=b, **_: told.append((b, isrs)))
    controller = Controller(host, 1, 2)  # type: ignore[arg-type]
    host.controller = controller
    return host, controller, told


def test_the_controller_writes_an_accepted_change_and_sends_update_metadata() -> None:
    host, controller, told = _controller()
    top, results = process_alter_isr(controller, 0, 0, [
        AlterPartitionRequest(A, 0, 0, 3, 5, (0, 1))])
    assert top == NONE and results == {A: (NONE, (3, (0, 1), 6))}
    assert host.states()[A] == (0, 3, (0, 1)) and host.zk.partitions[A].version == 6
    (write,) = _emitted(host, names.ZK_PARTITION_STATE)
    assert write["writer"] == "controller" and write["version"] == 6
    (shrink,) = _emitted(host, names.ISR_SHRINK)
    assert (shrink["removed"], shrink["by"], shrink["leader"]) == ([2], "leader", 0)
    # UpdateMetadata for the partition to every live broker; no notification znode.
    assert told == [(b, {A: (0, 1)}) for b in (0, 1, 2)]
    assert host.zk.isr_notifications == {}


def test_the_controller_fences_an_old_leader_epoch_and_a_stale_version() -> None:
    host, controller, _ = _controller()
    top, results = process_alter_isr(controller, 0, 0, [
        AlterPartitionRequest(A, 0, 0, 2, 5, (0, 1)),  # leader epoch 2 < 3
        AlterPartitionRequest(B, 1, 0, 2, 3, (1, 0))])  # version 3, ZooKeeper holds 4
    assert top == NONE
    assert results == {A: (FENCED_LEADER_EPOCH, None), B: (INVALID_UPDATE_VERSION, None)}
    assert host.states() == {A: (0, 3, (0, 1, 2)), B: (1, 2, (1, 0, 2))}
    assert _emitted(host, names.ZK_PARTITION_STATE) == []


def test_an_isr_already_in_place_is_answered_with_the_current_state() -> None:
    host, controller, _ = _controller()
    top, results = process_alter_isr(controller, 1, 0, [
        AlterPartitionRequest(B, 1, 0, 2, 3, (1, 0, 2))])  # an old version, the same ISR
    assert (top, results) == (NONE, {B: (NONE, (2, (1, 0, 2), 4))})
    assert _emitted(host, names.ZK_PARTITION_STATE) == []


@pytest.mark.parametrize("kip_841", [False, True])
def test_from_3_3_a_member_not_live_or_shutting_down_is_ineligible(kip_841: bool) -> None:
    host, controller, _ = _controller()
    host.variant.broker_config = lambda b: SimpleNamespace(
        alter_partition_ineligible=kip_841, inter_broker_protocol_version="3.9")
    controller.shutting_down.add(2)  # in controlled shutdown: not in liveBrokerIds
    top, results = process_alter_isr(controller, 0, 0, [
        AlterPartitionRequest(A, 0, 0, 3, 5, (0, 2))])
    assert top == NONE
    if kip_841:
        assert results == {A: (INELIGIBLE_REPLICA, None)}
        assert host.states()[A] == (0, 3, (0, 1, 2))
    else:  # 2.7–3.2: any ISR the leader proposes is written
        assert results == {A: (NONE, (3, (0, 2), 6))}


def test_a_stale_broker_epoch_or_a_resigned_controller_answers_for_the_whole_request() -> None:
    host, controller, _ = _controller()
    request = [AlterPartitionRequest(A, 0, 1, 3, 5, (0, 1))]
    assert process_alter_isr(controller, 0, 1, request) == (STALE_BROKER_EPOCH, {})
    controller.active = False
    assert process_alter_isr(controller, 0, 0, request) == (NOT_CONTROLLER, {})
    assert host.states()[A] == (0, 3, (0, 1, 2))


# -- the cluster: which profile changes the ISR how ---------------------------------------------
SCENARIO = """
name: alter-isr
seed: 5
duration: 30s
cluster:
  brokers: 3
  config: {replica.lag.time.max.ms: 10s, zookeeper.session.timeout.ms: 30s}
topics:
  - {name: t, partitions: 3, replication_factor: 3, assignment: [[0, 1, 2], [0, 2, 1], [0, 1, 2]]}
workload:
  producers:
    - {name: p, topic: t, rate: 100, acks: 1, linger: 50ms}
faults:
  - {kind: crash, broker: 2, at: 5s}
"""


@pytest.fixture
def run(write_scenario: Callable[[str, str], Path],
        tmp_path: Path) -> Callable[[str], list[dict[str, Any]]]:
    def go(kafka: str) -> list[dict[str, Any]]:
        path = write_scenario(SCENARIO + f'kafka: "{kafka}"\n', "s.yaml")
        variant = load_scenario(path).variants[0]
        simulate(variant, tmp_path / "e.jsonl")
        return [orjson.loads(line) for line in (tmp_path / "e.jsonl").read_bytes().splitlines()]

    return go


def _writes(events: list[dict[str, Any]]) -> list[tuple[float, str, int]]:
    """The shrinks written to ZooKeeper (the crashed broker comes back in the quiesce)."""
    return [(e["t_ms"], e["writer"], e["partition"]) for e in events
            if e["event"] == names.ZK_PARTITION_STATE and 2 not in e["isr"]]


def test_before_2_7_the_leader_writes_and_announces_its_shrink(run: Any) -> None:
    events = run("2.5")
    assert {w for _, w, _ in _writes(events)} == {"leader"}
    assert any(e["event"] == names.ISR_CHANGE_NOTIFICATION for e in events)


def test_from_2_8_one_alter_isr_in_flight_per_broker_the_rest_go_with_the_next(
        run: Any) -> None:
    events = run("2.8")
    writes = _writes(events)
    assert {w for _, w, _ in writes} == {"controller"}
    assert not any(e["event"] == names.ISR_CHANGE_NOTIFICATION for e in events)
    # Leader 0 drops broker 2 from its three partitions in one isr-expiration run: the first
    # goes at once, the two queued meanwhile together once the answer is back.
    times = sorted({t for t, _, _ in writes})
    assert len(writes) == 3 and len(times) == 2 and times[0] < times[1] < times[0] + 10


def test_in_2_7_the_queue_goes_out_on_the_50_ms_tick(run: Any) -> None:
    writes = _writes(run("2.7"))
    assert len(writes) == 3 and len({t for t, _, _ in writes}) == 1
    assert round(writes[0][0], 3) % 50 == pytest.approx(0.501, abs=0.01)  # tick + the trip


# -- the broker: AlterIsrManager and its channel to the controller -------------------------------
class Plane:
    """A ZooKeeper control plane as the AlterIsrManager sees it, whose wire waits for the test."""

    def __init__(self, host: Host, controller: Controller) -> None:
        self.host = host
        self.variant = host.variant
        self.zk = host.zk
        self.log = host.log
        self.controller: Controller | None = controller
        self.brokers: dict[int, Any] = {
            b: SimpleNamespace(id=b, alive=True, machine_down=False) for b in (1, 2)}
        self.wire: list[tuple[Any, Any, Callable[[], None]]] = []
        self.clients: list[Any] = []
        # What the channel's connections read: the test's clock (set to the leader's), and a
        # 0.5 ms link each way.
        self.sim: Simulation = host.sim
        self.streams = Streams(0)
        self.network = SimpleNamespace(round_trip_us=lambda a, b: 1000, cuts={},
                                       base_link=lambda a, b: SimpleNamespace(latency_us=500))

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False) -> None:
        self.wire.append((src, dst, deliver))

    def watch_connections(self, client: Any) -> None:
        self.clients.append(client)

    def deliver(self) -> list[tuple[Any, Any]]:
        wire, self.wire = self.wire, []
        for src, _dst, deliver in wire:
            if src in self.brokers and not self.brokers[src].alive:
                continue  # a dead process sends nothing
            deliver()
        return [(src, dst) for src, dst, _ in wire]


def _leader_with_manager(kafka: str = "3.9", **config: Any) -> tuple[Fixture, Plane, Host]:
    host = Host({KEY: (0, 1, 2)}, live=[0, 1, 2])
    host.variant.kafka = kafka  # the release whose connection setup timeouts the channel has
    host.zk.partitions = {KEY: PartitionState(0, 0, (0, 1, 2), 0)}
    controller = Controller(host, 1, 1)  # type: ignore[arg-type]
    host.controller = controller
    plane = Plane(host, controller)
    manager = AlterIsrManager(plane)
    one = Fixture(isr_writer=manager, min_isr=1, **config)  # 3.7: AlterIsr sent at once
    plane.sim = one.sim
    plane.brokers[0] = one.broker
    manager.broker_started(one.broker)
    # The controller's UpdateMetadata: the live brokers, and broker 1 as the controller.
    one.broker.on_update_metadata(1, {}, {}, alive=frozenset({0, 1, 2}), controller=1)
    _at(one, 1000)
    one.fetch(FakeFetcher(1), 0)
    one.produce(acks=1)
    one.fetch(FakeFetcher(1), 10)
    _at(one, 40_000)  # broker 2 has not fetched for the lag time
    return one, plane, host


def _new_controller(plane: Plane, host: Host) -> Controller:
    """Controller 1 loses its place; broker 2 is elected (the brokers are not told yet)."""
    assert plane.controller is not None
    plane.controller.active = False
    plane.controller = Controller(host, 2, 2)  # type: ignore[arg-type]
    return plane.controller


def _to(plane: Plane) -> list[tuple[Any, Any]]:
    return [(src, dst) for src, dst, _ in plane.wire]


def _taken_by(plane: Plane, one: Fixture, controller: int) -> None:
    """The request now goes to `controller`, which accepts the shrink; the leader commits it."""
    assert _to(plane) == [(0, controller)]
    plane.deliver()
    plane.deliver()
    replica = one.broker.replicas[KEY]
    assert replica.isr == (0, 1) and not replica.isr_change_pending


def test_not_controller_sends_it_again_to_the_controller_the_metadata_cache_names() -> None:
    one, plane, host = _leader_with_manager()
    one.broker.isr.expire()
    replica = one.broker.replicas[KEY]
    assert _to(plane) == [(0, 1)] and replica.isr_change_pending  # to controller 1
    _new_controller(plane, host)
    # BrokerToControllerChannelManager learns of the new controller only from its metadata
    # cache: the old controller answers NOT_CONTROLLER, the channel forgets it, and as the
    # cache still names broker 1, asks it again after the reconnect backoff.
    assert plane.deliver() == [(0, 1)]
    assert plane.deliver() == [(1, 0)]  # NOT_CONTROLLER
    assert plane.wire == []
    _at(one, 40_049)
    assert plane.wire == []
    _at(one, 40_051)  # reconnect.backoff.ms 50
    assert _to(plane) == [(0, 1)]
    plane.deliver()
    # The new controller's UpdateMetadata arrives meanwhile: the next attempt goes to it.
    one.broker.on_update_metadata(2, {}, {}, alive=frozenset({0, 1, 2}), controller=2)
    plane.deliver()  # NOT_CONTROLLER again
    assert _to(plane) == [(0, 2)]
    plane.deliver()
    plane.deliver()
    assert replica.isr == (0, 1) and not replica.isr_change_pending
    assert host.zk.partitions[KEY].version == 1 and replica.zk_version == 1
    assert one.emitted(names.ALTER_PARTITION_REJECTED) == []


def test_a_crashed_controller_resets_the_connection_and_is_asked_until_update_metadata(
        ) -> None:
    one, plane, host = _leader_with_manager()
    one.broker.isr.expire()
    replica = one.broker.replicas[KEY]
    plane.deliver()  # at controller 1, which answers ...
    plane.brokers[1].alive = False  # ... but its process dies first: no answer comes
    _new_controller(plane, host)
    (channel,) = plane.clients
    channel.connection_reset(1)  # the cluster tells it after a round trip
    # The metadata cache still names broker 1: refused after a round trip, again after the
    # reconnect backoff, until the new controller's UpdateMetadata names broker 2.
    assert plane.deliver() == [(1, 0)] and plane.wire == []
    _at(one, 40_200)
    assert plane.wire == [] and replica.isr_change_pending
    one.broker.on_update_metadata(2, {}, {}, alive=frozenset({0, 2}), controller=2)
    _at(one, 40_300)
    _taken_by(plane, one, 2)


def test_a_request_with_no_answer_goes_again_after_the_controller_socket_timeout() -> None:
    one, plane, host = _leader_with_manager()
    one.broker.isr.expire()
    replica = one.broker.replicas[KEY]
    plane.wire = []  # lost: the controller's machine lost power
    plane.brokers[1].alive = False
    plane.brokers[1].machine_down = True
    _new_controller(plane, host)
    one.broker.on_update_metadata(2, {}, {}, alive=frozenset({0, 2}), controller=2)
    _at(one, 69_999)
    assert plane.wire == [] and replica.isr_change_pending
    _at(one, 70_001)  # controller.socket.timeout.ms 30 s after it was sent
    _taken_by(plane, one, 2)


def _power_off(plane: Plane, broker: int) -> None:
    plane.brokers[broker].alive = False
    plane.brokers[broker].machine_down = True


def _first_write(plane: Plane, one: Fixture, start_ms: int, end_ms: int) -> int:
    """The first millisecond in [start, end) at whose end something is on the wire."""
    for ms in range(start_ms, end_ms):
        _at(one, ms)
        if plane.wire:
            return ms
    raise AssertionError(f"nothing sent by {end_ms} ms")


def test_a_request_on_the_connection_open_to_a_powered_off_controller_waits_its_timeout(
        ) -> None:
    one, plane, host = _leader_with_manager()
    one.broker.isr.expire()
    _taken_by(plane, one, 1)  # the channel's connection to controller 1 is open
    _power_off(plane, 1)  # no reset comes: the connection stays open
    _new_controller(plane, host)
    one.produce(acks=1)  # broker 1 falls behind
    _at(one, 71_000)
    one.broker.isr.expire()
    # Written at once on the open connection (rig before 2026-11-30 wrote nothing and gave up
    # after a flat 10 s, as if connecting anew).
    assert _to(plane) == [(0, 1)]
    plane.wire = []  # into a socket whose far end lost power
    one.broker.on_update_metadata(2, {}, {}, alive=frozenset({0, 2}), controller=2)
    _at(one, 100_999)
    assert plane.wire == [] and one.broker.replicas[KEY].isr_change_pending
    _at(one, 101_001)  # controller.socket.timeout.ms: closed, and sent to the new controller
    assert _to(plane) == [(0, 2)]
    plane.deliver()
    plane.deliver()
    assert one.broker.replicas[KEY].isr == (0,)


def test_a_new_connection_to_a_powered_off_controller_is_made_by_the_syn_its_restart_answers(
        ) -> None:
    one, plane, _ = _leader_with_manager()
    _power_off(plane, 1)  # before the channel ever connected to it
    one.broker.isr.expire()
    assert plane.wire == []  # connecting: SYNs at 0, 1, 3 s ...
    _at(one, 42_500)
    plane.brokers[1].alive, plane.brokers[1].machine_down = True, False  # restarted
    # The SYN sent 3 s into the attempt finds it listening: connected a round trip later,
    # and the request goes (rig before 2026-11-30: at the flat 10 s give-up, 50 s).
    assert _first_write(plane, one, 42_501, 60_000) == 43_001
    _taken_by(plane, one, 1)


@pytest.mark.parametrize(("kafka", "third"), [
    ("2.7", (32_000, 48_000)),  # socket.connection.setup.timeout.max.ms 127 s
    ("2.8", (24_000, 30_000)),  # 30 s (apache/kafka#10306): 40 s ±20 %, capped
])
def test_a_connection_to_a_machine_without_power_is_given_up_at_the_setup_timeout(
        kafka: str, third: tuple[int, int]) -> None:
    # A long request timeout: the attempts, not the request, end each wait.
    one, plane, _ = _leader_with_manager(kafka, controller_socket_timeout_ms=600_000)
    (channel,) = plane.clients
    _power_off(plane, 1)
    one.broker.isr.expire()
    given_up = []
    # 10 s, doubled with each failure in a row, ±20 %, capped (KIP-601).
    for attempt in ((8_000, 12_000), (16_000, 24_000), third):
        start = one.sim.now_us // 1000
        while channel.network.states.failed.get(1, 0) < len(given_up) + 1:
            assert one.sim.now_us // 1000 - start <= 200_000  # (no attempt that never ends)
            _at(one, one.sim.now_us // 1000 + 1)
        given_up.append(one.sim.now_us // 1000 - start)
        assert attempt[0] <= given_up[-1] <= attempt[1] + 1
        _at(one, one.sim.now_us // 1000 + 50)  # the reconnect backoff: a new attempt
    assert plane.wire == []


def test_a_request_waiting_for_its_connection_expires_at_the_request_timeout() -> None:
    one, plane, _ = _leader_with_manager(controller_socket_timeout_ms=5_000)
    _power_off(plane, 1)
    one.broker.isr.expire()  # connecting to controller 1 (given up 8–12 s later)
    one.broker.on_update_metadata(2, {}, {}, alive=frozenset({0, 2}), controller=2)
    # InterBrokerSendThread.failExpiredRequests: unsent for controller.socket.timeout.ms, the
    # request fails as disconnected; the channel reads its metadata cache again.
    assert _first_write(plane, one, 40_001, 60_000) == 45_000
    assert _to(plane) == [(0, 2)]


def test_with_no_controller_known_the_channel_waits_and_polls() -> None:
    one, plane, _ = _leader_with_manager()
    one.broker.metadata_cache.reset()  # a restarted process: no UpdateMetadata yet
    one.broker.isr.expire()
    assert plane.wire == [] and one.broker.replicas[KEY].isr_change_pending
    _at(one, 40_050)
    assert plane.wire == []  # the channel looks again every 100 ms
    one.broker.on_update_metadata(1, {}, {}, alive=frozenset({0, 1, 2}), controller=1)
    _at(one, 40_300)
    _taken_by(plane, one, 1)


@pytest.mark.parametrize(("version", "kip_841"), [("3.2", False), ("3.3", True)])
def test_from_3_3_the_leader_proposes_no_follower_its_metadata_cache_has_not_alive(
        version: str, kip_841: bool) -> None:
    host = Host({KEY: (0, 1, 2)}, live=[0, 1])  # broker 2's ZooKeeper session expired
    host.zk.partitions = {KEY: PartitionState(0, 1, (0, 1), 1)}
    controller = Controller(host, 1, 2)  # type: ignore[arg-type]
    host.controller = controller
    host.variant.broker_config = lambda b: SimpleNamespace(
        alter_partition_ineligible=kip_841, inter_broker_protocol_version="3.9")
    plane = Plane(host, controller)
    manager = AlterIsrManager(plane)
    config = BrokerConfig(version, 12, alter_partition_ineligible=kip_841)
    one = Fixture(isr_writer=manager, config=config, min_isr=1)
    plane.brokers[0] = one.broker
    manager.broker_started(one.broker)
    one.broker.on_leader_and_isr(2, {KEY: PartitionState(0, 1, (0, 1), 1)})
    one.broker.on_update_metadata(2, {KEY: 0}, {KEY: (0, 1)}, alive=frozenset({0, 1}),
                                  controller=1)
    _at(one, 1000)
    one.fetch(FakeFetcher(2), 0)  # broker 2's process still fetches, at the HW
    replica = one.broker.replicas[KEY]
    # KIP-841 (KAFKA-13916, Partition.isReplicaIsrEligible → ZkMetadataCache.hasAliveBroker):
    # a 3.3+ leader does not propose a follower its metadata cache does not list alive; 3.2
    # proposes it and the controller writes it (it refuses only from 3.3).
    assert [(src, dst) for src, dst, _ in plane.wire] == ([] if kip_841 else [(0, 1)])
    assert replica.isr_change_pending is not kip_841
    if kip_841:
        # Broker 2 registers again; the controller's UpdateMetadata lists it alive: its next
        # fetch takes it back.
        controller.live.add(2)
        one.broker.on_update_metadata(2, {}, {}, alive=frozenset({0, 1, 2}), controller=1)
        one.fetch(FakeFetcher(2), 0)
        assert [(src, dst) for src, dst, _ in plane.wire] == [(0, 1)]
    plane.deliver()
    plane.deliver()
    assert replica.isr == (0, 1, 2)
