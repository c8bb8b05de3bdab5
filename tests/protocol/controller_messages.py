"""Messages of the shapes rig.protocol.controller_sizes and rig.protocol.alter_partition size,
built field by field from Kafka's JSON (placeholder values, fixed and arbitrary: only their
sizes matter), for tests that compare the fast sizes with the encoder."""

from __future__ import annotations

from collections.abc import Sequence

from rig.protocol.alter_partition import (
    AlterPartitionPartitionData,
    AlterPartitionPartitionResult,
    AlterPartitionRequest,
    AlterPartitionResponse,
    AlterPartitionTopicData,
    AlterPartitionTopicResult,
    BrokerState,
)
from rig.protocol.leader_and_isr import (
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionError,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    LeaderAndIsrTopicError,
    LeaderAndIsrTopicState,
)
from rig.protocol.sizes import topic_id
from rig.protocol.stop_replica import (
    StopReplicaPartitionError,
    StopReplicaPartitionState,
    StopReplicaPartitionV0,
    StopReplicaRequest,
    StopReplicaResponse,
    StopReplicaTopicState,
    StopReplicaTopicV1,
)
from rig.protocol.update_metadata import (
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataTopicState,
)


def _by_topic(items: Sequence[tuple]) -> dict[str, list[tuple[int, tuple]]]:
    """Each topic's items, with the item's index as the partition number."""
    out: dict[str, list[tuple[int, tuple]]] = {}
    for i, item in enumerate(items):
        out.setdefault(item[0], []).append((i, item))
    return out


def leader_and_isr_request(version: int, partitions: Sequence[tuple[str, int, int, int, int]],
                           leaders: Sequence[str]) -> LeaderAndIsrRequest:
    def state(i: int, shape: tuple, named: bool) -> LeaderAndIsrPartitionState:
        name, isr, replicas, adding, removing = shape
        return LeaderAndIsrPartitionState(
            name if named else "", i, 3, 1, 7, tuple(range(isr)), 9, tuple(range(replicas)),
            tuple(range(adding)), tuple(range(removing)), True, 1 if version >= 6 else 0)

    live = tuple(LeaderAndIsrLiveLeader(i, host, 9092) for i, host in enumerate(leaders))
    common = {"controller_id": 2, "controller_epoch": 3, "live_leaders": live,
              "broker_epoch": 40 if version >= 2 else -1, "type": 1 if version >= 5 else 0,
              "is_kraft_controller": version >= 7}
    if version < 2:
        return LeaderAndIsrRequest(ungrouped_partition_states=tuple(
            state(i, p, True) for i, p in enumerate(partitions)), **common)
    return LeaderAndIsrRequest(topic_states=tuple(
        LeaderAndIsrTopicState(name, topic_id(name), tuple(state(i, p, False) for i, p in items))
        for name, items in _by_topic(partitions).items()), **common)


def leader_and_isr_response(version: int, topics: Sequence[tuple[str, int]],
                            ) -> LeaderAndIsrResponse:
    if version < 5:
        return LeaderAndIsrResponse(partition_errors=tuple(
            LeaderAndIsrPartitionError(name, i, 0) for name, n in topics for i in range(n)))
    return LeaderAndIsrResponse(topics=tuple(LeaderAndIsrTopicError(topic_id(name), tuple(
        LeaderAndIsrPartitionError("", i, 0) for i in range(n))) for name, n in topics))


def update_metadata_request(version: int, partitions: Sequence[tuple[str, int, int, int]],
                            brokers: Sequence[tuple[str, str, str | None]],
                            ) -> UpdateMetadataRequest:
    def state(i: int, shape: tuple, named: bool) -> UpdateMetadataPartitionState:
        name, isr, replicas, offline = shape
        return UpdateMetadataPartitionState(name if named else "", i, 3, 1, 7, tuple(range(isr)),
                                            9, tuple(range(replicas)), tuple(range(offline)))

    def broker(i: int, host: str, listener: str, rack: str | None) -> UpdateMetadataBroker:
        if version == 0:
            return UpdateMetadataBroker(i, host, 9092)
        return UpdateMetadataBroker(i, endpoints=(UpdateMetadataEndpoint(
            9092, host, listener if version >= 3 else "", 0),),
            rack=rack if version >= 2 else None)

    live = tuple(broker(i, *b) for i, b in enumerate(brokers))
    common = {"controller_id": 2, "controller_epoch": 3, "live_brokers": live,
              "broker_epoch": 40 if version >= 5 else -1, "is_kraft_controller": version >= 8}
    if version < 5:
        return UpdateMetadataRequest(ungrouped_partition_states=tuple(
            state(i, p, True) for i, p in enumerate(partitions)), **common)
    return UpdateMetadataRequest(topic_states=tuple(UpdateMetadataTopicState(
        name, topic_id(name) if version >= 7 else bytes(16),
        tuple(state(i, p, False) for i, p in items))
        for name, items in _by_topic(partitions).items()), **common)


def stop_replica(version: int, partitions: Sequence[tuple[str, bool]],
                 ) -> tuple[StopReplicaRequest, StopReplicaResponse]:
    common = {"controller_id": 2, "controller_epoch": 3,
              "broker_epoch": 40 if version >= 1 else -1, "is_kraft_controller": version >= 4,
              "delete_partitions": version <= 2}
    if version == 0:
        request = StopReplicaRequest(ungrouped_partitions=tuple(
            StopReplicaPartitionV0(name, i) for i, (name, _) in enumerate(partitions)), **common)
    elif version <= 2:
        request = StopReplicaRequest(topics=tuple(
            StopReplicaTopicV1(name, tuple(i for i, _ in items))
            for name, items in _by_topic(partitions).items()), **common)
    else:
        request = StopReplicaRequest(topic_states=tuple(StopReplicaTopicState(name, tuple(
            StopReplicaPartitionState(i, 5, item[1]) for i, item in items))
            for name, items in _by_topic(partitions).items()), **common)
    response = StopReplicaResponse(0, tuple(
        StopReplicaPartitionError(name, i, 0) for i, (name, _) in enumerate(partitions)))
    return request, response


def alter_partition(version: int, partitions: Sequence[tuple[str, int]],
                    ) -> tuple[AlterPartitionRequest, AlterPartitionResponse]:
    grouped = _by_topic(partitions)

    def data(i: int, isr: int) -> AlterPartitionPartitionData:
        members = tuple(range(isr))
        if version >= 3:
            epochs = tuple(BrokerState(b, 30) for b in members)
            return AlterPartitionPartitionData(i, 4, (), epochs, 1, 8)
        return AlterPartitionPartitionData(i, 4, members, (), 1 if version >= 1 else 0, 8)

    def result(i: int, isr: int) -> AlterPartitionPartitionResult:
        return AlterPartitionPartitionResult(i, 0, 1, 4, tuple(range(isr)),
                                             1 if version >= 1 else 0, 8)

    def name_and_id(name: str) -> tuple[str, bytes]:
        return (name, bytes(16)) if version < 2 else ("", topic_id(name))

    request = AlterPartitionRequest(1, 30, tuple(AlterPartitionTopicData(
        *name_and_id(name), tuple(data(i, p[1]) for i, p in items))
        for name, items in grouped.items()))
    response = AlterPartitionResponse(0, 0, tuple(AlterPartitionTopicResult(
        *name_and_id(name), tuple(result(i, p[1]) for i, p in items))
        for name, items in grouped.items()))
    return request, response
