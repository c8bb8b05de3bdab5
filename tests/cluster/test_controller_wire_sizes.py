"""The ZooKeeper-era controller's LeaderAndIsr and UpdateMetadata, its StopReplica, a broker's
ControlledShutdown and its answer, and AlterIsr / AlterPartition and its answer are counted at
their exact bytes on the wire: the size prefix, the header (the sender's broker id as client
id) and the body at the version its release and inter.broker.protocol.version give
(ControllerChannelManager, KafkaServer.controlledShutdown, AlterPartitionManager), each checked
here against a message built field by field from the cluster's state and encoded."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.controlled_shutdown import do_controlled_shutdown
from rig.cluster.controller import Controller
from rig.cluster.controller_wire import (
    alter_partition_bytes,
    alter_partition_response_bytes,
    controlled_shutdown_bytes,
    controlled_shutdown_response_bytes,
)
from rig.cluster.kraft.alter_partition_manager import AlterPartitionManager
from rig.cluster.kraft.metadata_publisher import BrokerMetadataPublisher
from rig.cluster.log import Log
from rig.cluster.replica import Replica, Role
from rig.cluster.zookeeper import PartitionState
from rig.protocol import (
    ALTER_PARTITION,
    CONTROLLED_SHUTDOWN,
    LEADER_AND_ISR,
    STOP_REPLICA,
    UPDATE_METADATA,
    RequestHeader,
    ResponseHeader,
    encode_request_header,
    encode_response_header,
    frame,
)
from rig.protocol.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionPartitionResult,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicData,
    AlterPartitionTopicResult,
    BrokerState,
    encode_alter_partition_request,
    encode_alter_partition_response,
)
from rig.protocol.controlled_shutdown import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    RemainingPartition,
    encode_controlled_shutdown_request,
    encode_controlled_shutdown_response,
)
from rig.protocol.leader_and_isr import (
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionError,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    LeaderAndIsrTopicError,
    LeaderAndIsrTopicState,
    encode_leader_and_isr_request,
    encode_leader_and_isr_response,
)
from rig.protocol.stop_replica import (
    StopReplicaPartitionError,
    StopReplicaPartitionState,
    StopReplicaPartitionV0,
    StopReplicaRequest,
    StopReplicaResponse,
    StopReplicaTopicState,
    StopReplicaTopicV1,
    encode_stop_replica_request,
    encode_stop_replica_response,
)
from rig.protocol.update_metadata import (
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
    UpdateMetadataTopicState,
    encode_update_metadata_request,
    encode_update_metadata_response,
)
from rig.scenario import api_versions
from rig.scenario.profiles import VERSIONS
from tests.cluster.test_alter_isr import _leader_with_manager
from tests.cluster.test_broker_unit import KEY
from tests.cluster.test_failure_path import Host
from tests.cluster.test_kraft_broker_epochs import _Plane

A, B, C = ("t", 0), ("t", 1), ("topic-b", 0)
RACKS = {0: "az-a", 1: "az-b", 2: None}
RELEASES = ["0.8.2", "0.9", "0.10", "0.11", "1.0", "2.2", "2.4", "2.7", "2.8", "3.2", "3.4",
            "3.9"]
ID = bytes(16)  # ZooKeeper-mode topic ids are not modelled: any 16 bytes are 16 bytes


class Wire(Host):
    """Test_failure_path's controller host at Kafka `kafka`, keeping every message's bytes."""

    def __init__(self, kafka: str, live: list[int]) -> None:
        super().__init__({A: (0, 1, 2), B: (1, 2, 0), C: (2, 0)}, live=live)
        config = self.variant.broker_config(0)
        config.inter_broker_protocol_version = kafka
        config.isr_update = "alter-isr"
        self.variant.kafka = kafka
        self.variant.broker_config = lambda b: config
        for b, broker in self.brokers.items():
            broker.rack = RACKS[b]
            broker.on_stop_replica = lambda *args: None
        self.sent: list[tuple[Any, Any, int]] = []
        self.answers: list[tuple[int, int]] = []  # (broker, bytes) answering the controller

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False) -> None:
        if isinstance(deliver, partial) and deliver.func.__name__ == "answered":
            self.answers.append((src, nbytes))  # (the controller channel's)
        else:
            self.sent.append((src, dst, nbytes))
        deliver()

    def to_brokers(self) -> list[tuple[int, int]]:
        return [(dst, n) for src, dst, n in self.sent if src == 1 and isinstance(dst, int)]


def _request(api: Any, version: int, client: str, body: bytes) -> int:
    return len(frame(encode_request_header(RequestHeader(version, 0, client, api.key)), body))


def _response(api: Any, version: int, body: bytes) -> int:
    return len(frame(encode_response_header(ResponseHeader(0), version, api), body))


def _client(kafka: str) -> str:
    return "id_1-host_broker-1-port_9092" if kafka == "0.8.2" else "1"


def _leader_and_isr(host: Wire, kafka: str, broker: int, keys: list[Any]) -> int:
    version = api_versions.leader_and_isr_version(kafka)
    zk = host.zk.partitions

    def state(key: Any) -> LeaderAndIsrPartitionState:
        s = zk[key]
        return LeaderAndIsrPartitionState(key[0] if version < 2 else "", key[1], 2, s.leader,
                                          s.leader_epoch, s.isr, s.version, host.assignments[key])

    leaders = tuple(LeaderAndIsrLiveLeader(b, f"broker-{b}", 9092)
                    for b in sorted({zk[k].leader for k in keys} & set(host.zk.sessions)))
    if version < 2:
        request = LeaderAndIsrRequest(1, controller_epoch=2, live_leaders=leaders,
                                      ungrouped_partition_states=tuple(state(k) for k in keys))
    else:
        topics = dict.fromkeys(k[0] for k in keys)
        request = LeaderAndIsrRequest(1, controller_epoch=2, broker_epoch=0, live_leaders=leaders,
                                      topic_states=tuple(LeaderAndIsrTopicState(name, ID, tuple(
                                          state(k) for k in keys if k[0] == name))
                                          for name in topics))
    return _request(LEADER_AND_ISR, version, _client(kafka),
                    encode_leader_and_isr_request(request, version))


def _update_metadata(host: Wire, kafka: str, online: set[int]) -> int:
    version = api_versions.update_metadata_version(kafka)
    zk = host.zk.partitions
    keys = list(zk)

    def state(key: Any) -> UpdateMetadataPartitionState:
        s, replicas = zk[key], host.assignments[key]
        return UpdateMetadataPartitionState(
            key[0] if version < 5 else "", key[1], 2, s.leader, s.leader_epoch, s.isr,
            s.version, replicas, tuple(b for b in replicas if b not in online))

    def broker(b: int) -> UpdateMetadataBroker:
        if version == 0:
            return UpdateMetadataBroker(b, f"broker-{b}", 9092)
        return UpdateMetadataBroker(b, endpoints=(UpdateMetadataEndpoint(
            9092, f"broker-{b}", "PLAINTEXT", 0),), rack=RACKS[b])

    live = tuple(broker(b) for b in sorted(host.zk.sessions))
    if version < 5:
        request = UpdateMetadataRequest(1, controller_epoch=2, live_brokers=live,
                                        ungrouped_partition_states=tuple(state(k) for k in keys))
    else:
        request = UpdateMetadataRequest(1, controller_epoch=2, broker_epoch=0, live_brokers=live,
                                        topic_states=tuple(UpdateMetadataTopicState(
                                            name, ID, tuple(state(k) for k in keys
                                                            if k[0] == name))
                                            for name in dict.fromkeys(k[0] for k in keys)))
    return _request(UPDATE_METADATA, version, _client(kafka),
                    encode_update_metadata_request(request, version))


@pytest.mark.parametrize("kafka", RELEASES)
def test_a_new_controllers_leader_and_isr_and_update_metadata_are_counted_at_their_wire_bytes(
        kafka: str) -> None:
    # Broker 2 died while there was no controller: the new one (broker 1) takes it out of the
    # ISRs, elects a leader for topic-b-0 and tells every live broker everything.
    host = Wire(kafka, live=[0, 1])
    host.zk.partitions = {A: PartitionState(0, 3, (0, 1, 2), 5),
                          B: PartitionState(1, 2, (1, 2, 0), 4),
                          C: PartitionState(2, 6, (2, 0), 8)}
    Controller(host, 1, 2).on_elected()  # type: ignore[arg-type]
    assert host.zk.partitions[C].leader == 0
    assert host.to_brokers() == [
        (0, _leader_and_isr(host, kafka, 0, [A, B, C])),
        (1, _leader_and_isr(host, kafka, 1, [A, B])),
        (0, _update_metadata(host, kafka, {0, 1})),
        (1, _update_metadata(host, kafka, {0, 1}))]
    # Every request is answered, each partition it named with its error (here none).
    assert host.answers == [(0, _leader_and_isr_answer(kafka, [A, B, C])),
                            (1, _leader_and_isr_answer(kafka, [A, B])),
                            (0, _update_metadata_answer(kafka)),
                            (1, _update_metadata_answer(kafka))]


def _leader_and_isr_answer(kafka: str, keys: list[Any]) -> int:
    version = api_versions.leader_and_isr_version(kafka)
    if version < 5:
        answer = LeaderAndIsrResponse(0, partition_errors=tuple(
            LeaderAndIsrPartitionError(topic, index) for topic, index in keys))
    else:
        topics = dict.fromkeys(t for t, _ in keys)
        answer = LeaderAndIsrResponse(0, topics=tuple(LeaderAndIsrTopicError(ID, tuple(
            LeaderAndIsrPartitionError("", index) for t, index in keys if t == topic))
            for topic in topics))
    return _response(LEADER_AND_ISR, version, encode_leader_and_isr_response(answer, version))


def _update_metadata_answer(kafka: str) -> int:
    version = api_versions.update_metadata_version(kafka)
    return _response(UPDATE_METADATA, version,
                     encode_update_metadata_response(UpdateMetadataResponse(0), version))


@pytest.mark.parametrize("kafka", RELEASES)
def test_controlled_shutdown_and_its_stop_replica_are_counted_at_their_wire_bytes(
        kafka: str) -> None:
    host = Wire(kafka, live=[0, 1, 2])
    host.zk.partitions = {A: PartitionState(0, 3, (0, 1, 2), 5),
                          B: PartitionState(1, 2, (1, 2, 0), 4),
                          C: PartitionState(2, 6, (2, 0), 8)}
    controller = Controller(host, 1, 2)  # type: ignore[arg-type]
    host.controller = controller
    assert do_controlled_shutdown(controller, 2) == []
    # StopReplica (delete = false) to broker 2 for the partitions it follows: A and B.
    version = api_versions.stop_replica_version(kafka)
    if version == 0:
        request = StopReplicaRequest(1, controller_epoch=2, ungrouped_partitions=(
            StopReplicaPartitionV0("t", 0), StopReplicaPartitionV0("t", 1)))
    elif version <= 2:
        request = StopReplicaRequest(1, controller_epoch=2, broker_epoch=0,
                                     topics=(StopReplicaTopicV1("t", (0, 1)),))
    else:
        request = StopReplicaRequest(1, controller_epoch=2, broker_epoch=0, topic_states=(
            StopReplicaTopicState("t", (StopReplicaPartitionState(0, 3),
                                        StopReplicaPartitionState(1, 2))),))
    stop = _request(STOP_REPLICA, version, _client(kafka),
                    encode_stop_replica_request(request, version))
    assert (2, stop) in host.to_brokers()
    answer = StopReplicaResponse(0, (StopReplicaPartitionError("t", 0),
                                     StopReplicaPartitionError("t", 1)))
    assert (2, _response(STOP_REPLICA, version, encode_stop_replica_response(answer, version))
            ) in host.answers
    # The broker's request and the answer: v0 has no client_id in its header.
    version = api_versions.controlled_shutdown_version(kafka, kafka)
    broker = host.brokers[2]
    broker.config = host.variant.broker_config(2)
    body = encode_controlled_shutdown_request(ControlledShutdownRequest(2, 0), version)
    header = encode_request_header(RequestHeader(version, 0, "2", CONTROLLED_SHUTDOWN.key))
    assert controlled_shutdown_bytes(host.variant, broker) == len(frame(header, body))
    answer = ControlledShutdownResponse(0, (RemainingPartition("topic-b", 0),))
    assert controlled_shutdown_response_bytes(host.variant, broker, [C]) == _response(
        CONTROLLED_SHUTDOWN, version, encode_controlled_shutdown_response(answer, version))


@pytest.mark.parametrize("kafka", ["2.7", "3.2", "3.3", "3.5", "3.9"])
def test_alter_isr_and_its_answer_are_counted_at_their_wire_bytes(kafka: str) -> None:
    version = api_versions.alter_partition_version(kafka, kafka)
    host = Wire(kafka, live=[0, 1, 2])
    broker = host.brokers[0]
    broker.config = host.variant.broker_config(0)

    def data(key: Any, isr: tuple[int, ...]) -> AlterPartitionPartitionData:
        if version >= 3:
            return AlterPartitionPartitionData(key[1], 3, (), tuple(
                BrokerState(b, 0) for b in isr), 0, 5)
        return AlterPartitionPartitionData(key[1], 3, isr, (), 0, 5)

    def topic(name: str, parts: tuple[Any, ...], cls: Any) -> Any:
        return cls(name, partitions=parts) if version < 2 else cls(topic_id=ID, partitions=parts)

    request = AlterPartitionRequest(0, 0, (
        topic("t", (data(A, (0, 1)), data(B, (1, 0, 2))), AlterPartitionTopicData),
        topic("topic-b", (data(C, (2,)),), AlterPartitionTopicData)))
    assert alter_partition_bytes(host.variant, broker, [(A, 2), (B, 3), (C, 1)]) == _request(
        ALTER_PARTITION, version, "0", encode_alter_partition_request(request, version))
    # An answer: A accepted with its new ISR, B refused (an error, no ISR).
    response = AlterPartitionResponse(0, 0, (topic("t", (
        AlterPartitionPartitionResult(0, 0, 0, 3, (0, 1), 0, 6),
        AlterPartitionPartitionResult(1, 12)), AlterPartitionTopicResult),))
    assert alter_partition_response_bytes(host.variant, broker, [(A, 2), (B, 0)]) == _response(
        ALTER_PARTITION, version, encode_alter_partition_response(response, version))


def test_a_leaders_alter_isr_on_the_wire_has_those_bytes() -> None:
    # Broker 0 leads KEY (replicas 0, 1, 2) and drops broker 2 from the ISR through controller
    # 1 (rig.cluster.alter_isr_manager), the cluster at Kafka 3.9.
    one, plane, _host = _leader_with_manager()
    sizes: list[tuple[Any, Any, int]] = []
    send = plane.send

    def recording(src: Any, dst: Any, nbytes: int, deliver: Any, **kwargs: Any) -> None:
        sizes.append((src, dst, nbytes))
        send(src, dst, nbytes, deliver, **kwargs)

    plane.send = recording  # type: ignore[method-assign]
    one.broker.isr.expire()
    plane.deliver()
    plane.deliver()
    replica = one.broker.replicas[KEY]
    assert replica.isr == (0, 1) and replica.pending_isr is None
    version = api_versions.alter_partition_version(
        "3.9", one.broker.config.inter_broker_protocol_version)
    assert version == 3
    request = AlterPartitionRequest(0, 0, (AlterPartitionTopicData(topic_id=ID, partitions=(
        AlterPartitionPartitionData(KEY[1], 0, (), (BrokerState(0, 0), BrokerState(1, 0)), 0,
                                    0),)),))
    response = AlterPartitionResponse(0, 0, (AlterPartitionTopicResult(topic_id=ID, partitions=(
        AlterPartitionPartitionResult(KEY[1], 0, 0, 0, (0, 1), 0, 1),)),))
    assert sizes == [
        (0, 1, _request(ALTER_PARTITION, version, "0",
                        encode_alter_partition_request(request, version))),
        (1, 0, _response(ALTER_PARTITION, version,
                         encode_alter_partition_response(response, version)))]


def test_the_versions_follow_the_release_and_the_inter_broker_protocol() -> None:
    at_own_ibp = {v: (api_versions.leader_and_isr_version(v),
                      api_versions.update_metadata_version(v),
                      api_versions.stop_replica_version(v),
                      api_versions.controlled_shutdown_version(v, v))
                  for v in VERSIONS if v < "4"}
    assert at_own_ibp == {
        "0.8.2": (0, 0, 0, 0), "0.9": (0, 1, 0, 1), "0.10": (0, 2, 0, 1), "0.11": (0, 3, 0, 1),
        "1.0": (1, 4, 0, 1), "1.1": (1, 4, 0, 1), "2.0": (1, 4, 0, 1), "2.1": (1, 4, 0, 1),
        "2.3": (2, 5, 1, 2), "2.4": (4, 6, 2, 3), "2.5": (4, 6, 2, 3), "2.7": (4, 6, 3, 3),
        "2.8": (5, 7, 3, 3), "3.0": (5, 7, 3, 3), "3.1": (5, 7, 3, 3), "3.3": (6, 7, 3, 3),
        "3.4": (7, 8, 4, 3), "3.5": (7, 8, 4, 3), "3.6": (7, 8, 4, 3), "3.7": (7, 8, 4, 3),
        "3.8": (7, 8, 4, 3), "3.9": (7, 8, 4, 3)}
    # 0.9–0.11 send ControlledShutdown v1 whatever the IBP; from 1.0 the IBP decides.
    assert api_versions.controlled_shutdown_version("0.10", "0.8.2") == 1
    assert api_versions.controlled_shutdown_version("1.0", "0.8.2") == 0
    alter = {v: api_versions.alter_partition_version(v, v) for v in VERSIONS
             if v >= "2.7"}
    assert alter == {"2.7": 0, "2.8": 0, "3.0": 0, "3.1": 0, "3.3": 2, "3.4": 2, "3.5": 3,
                     "3.6": 3, "3.7": 3, "3.8": 3, "3.9": 3, "4.0": 3, "4.1": 3, "4.2": 3}
    # Below IBP 2.8 no topic ids: at most v1 (AlterPartitionRequest.Builder).
    assert api_versions.alter_partition_version("3.9", "2.7") == 1


class _AnsweringPlane(_Plane):
    """A KRaft plane whose controller accepts the change at once; the wire keeps the bytes."""

    def __init__(self, image: BrokerMetadataPublisher) -> None:
        super().__init__(image)
        self.sizes: list[tuple[Any, Any, int]] = []

    def at_controller(self, node: Any) -> Any:
        def alter_partition(request: Any, answer: Any) -> None:
            answer(0, SimpleNamespace(leader_epoch=request.leader_epoch, isr=request.new_isr,
                                      partition_epoch=request.partition_epoch + 1))
        return SimpleNamespace(alter_partition=alter_partition)

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Any, **kwargs: Any) -> None:
        self.sizes.append((src, dst, nbytes))
        deliver()


def test_a_kraft_leaders_alter_partition_on_the_wire_has_its_bytes() -> None:
    image = BrokerMetadataPublisher(None, None)
    image.epoch, image.epochs, image.known = 3, {0: 3, 1: 5, 2: 4}, 0
    plane = _AnsweringPlane(image)
    replica = Replica(KEY, 0, (0, 1, 2), Log(), 0, role=Role.LEADER)
    replica.isr = (0, 1, 2)
    broker = SimpleNamespace(id=0, incarnation=1, now_ms=0.0, schedule=lambda *args: None,
                             alive=True, replicas={KEY: replica},
                             replica_manager=SimpleNamespace(
                                 set_isr=lambda r, isr: setattr(r, "isr", isr)),
                             config=SimpleNamespace(inter_broker_protocol_version="3.9",
                                                    alter_isr_takes_same_version=True,
                                                    hw_on_alter_isr_response=False,
                                                    controller_socket_timeout_ms=30_000))
    AlterPartitionManager(plane).change_isr(broker, replica, (0, 1), shrink=[2])
    assert replica.isr == (0, 1)
    # AlterPartition v3 (3.9): the ISR with each member's broker epoch (its own, 3; broker 1's
    # as its fetches told, none: -1), by topic id; controller node "controller" answers.
    request = AlterPartitionRequest(0, 3, (AlterPartitionTopicData(topic_id=ID, partitions=(
        AlterPartitionPartitionData(KEY[1], 0, (), (BrokerState(0, 3), BrokerState(1, -1)), 0,
                                    0),)),))
    response = AlterPartitionResponse(0, 0, (AlterPartitionTopicResult(topic_id=ID, partitions=(
        AlterPartitionPartitionResult(KEY[1], 0, 0, 0, (0, 1), 0, 1),)),))
    assert [n for _, _, n in plane.sizes] == [
        _request(ALTER_PARTITION, 3, "0", encode_alter_partition_request(request, 3)),
        _response(ALTER_PARTITION, 3, encode_alter_partition_response(response, 3))]


def test_a_reassignments_leader_and_isr_carries_the_adding_replicas() -> None:
    # topic-b-0 moves from [2, 0] to [2, 0, 1] (KIP-455, Kafka 3.9: LeaderAndIsr v7): phase A
    # bumps the leader epoch and sends RS = [2, 0, 1] with AR = [1] to every replica of RS.
    host = Wire("3.9", live=[0, 1, 2])
    host.zk.partitions = {C: PartitionState(2, 6, (2, 0), 8)}
    host.assignments = {C: (2, 0)}
    controller = Controller(host, 1, 2)  # type: ignore[arg-type]
    host.controller = controller
    assert controller.reassignment.alter(C, (2, 0, 1)) == 0
    state = LeaderAndIsrPartitionState("", 0, 2, 2, 7, (2, 0), 9, (2, 0, 1), (1,), ())
    request = LeaderAndIsrRequest(1, controller_epoch=2, broker_epoch=0, live_leaders=(
        LeaderAndIsrLiveLeader(2, "broker-2", 9092),), topic_states=(
        LeaderAndIsrTopicState("topic-b", ID, (state,)),))
    expected = _request(LEADER_AND_ISR, 7, "1", encode_leader_and_isr_request(request, 7))
    assert host.to_brokers()[:3] == [(0, expected), (1, expected), (2, expected)]
