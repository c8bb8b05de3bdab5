"""The ZooKeeper-era controller's requests (LeaderAndIsr v0–v7, UpdateMetadata v0–v8,
StopReplica v0–v4), ControlledShutdown (v0–v3) and AlterPartition / AlterIsr (v0–v3) on the wire:
the fast sizes agree with the encoder over every version and many shapes, the messages round
trip, and golden bytes written out by hand from Kafka's JSON show the descriptions are Kafka's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rig.protocol import (
    ALTER_PARTITION,
    CONTROLLED_SHUTDOWN,
    LEADER_AND_ISR,
    STOP_REPLICA,
    UPDATE_METADATA,
    RequestHeader,
    api_request_header_size,
    decode_request_header,
    encode_request_header,
)
from rig.protocol.alter_partition import (
    ALTER_PARTITION_REQUEST,
    ALTER_PARTITION_RESPONSE,
    AlterPartitionPartitionData,
    AlterPartitionRequest,
    AlterPartitionTopicData,
    BrokerState,
    alter_partition_request_body_size,
    alter_partition_response_body_size,
    decode_alter_partition_request,
    decode_alter_partition_response,
    encode_alter_partition_request,
    encode_alter_partition_response,
)
from rig.protocol.codec import normalize_struct
from rig.protocol.controlled_shutdown import (
    CONTROLLED_SHUTDOWN_REQUEST,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    RemainingPartition,
    controlled_shutdown_request_body_size,
    controlled_shutdown_response_body_size,
    decode_controlled_shutdown_request,
    decode_controlled_shutdown_response,
    encode_controlled_shutdown_request,
    encode_controlled_shutdown_response,
)
from rig.protocol.controller_sizes import (
    leader_and_isr_request_body_size,
    leader_and_isr_response_body_size,
    stop_replica_request_body_size,
    stop_replica_response_body_size,
    update_metadata_request_body_size,
    update_metadata_response_body_size,
)
from rig.protocol.leader_and_isr import (
    LEADER_AND_ISR_REQUEST,
    LEADER_AND_ISR_RESPONSE,
    LeaderAndIsrLiveLeader,
    LeaderAndIsrPartitionState,
    LeaderAndIsrRequest,
    LeaderAndIsrTopicState,
    decode_leader_and_isr_request,
    decode_leader_and_isr_response,
    encode_leader_and_isr_request,
    encode_leader_and_isr_response,
)
from rig.protocol.stop_replica import (
    STOP_REPLICA_REQUEST,
    STOP_REPLICA_RESPONSE,
    decode_stop_replica_request,
    decode_stop_replica_response,
    encode_stop_replica_request,
    encode_stop_replica_response,
)
from rig.protocol.update_metadata import (
    UPDATE_METADATA_REQUEST,
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataPartitionState,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
    UpdateMetadataTopicState,
    decode_update_metadata_request,
    decode_update_metadata_response,
    encode_update_metadata_request,
    encode_update_metadata_response,
)
from tests.protocol import controller_messages as build

NAMES = st.sampled_from(["t", "topic-a", "é", "x" * 40])
HOSTS = st.text(st.characters(codec="utf-8"), max_size=20)
COUNT = st.integers(0, 5)


@given(version=st.sampled_from(list(LEADER_AND_ISR.versions)),
       partitions=st.lists(st.tuples(NAMES, COUNT, COUNT, COUNT, COUNT), max_size=12),
       leaders=st.lists(HOSTS, max_size=4))
def test_leader_and_isr_sizes_match_the_encoder(version: int, partitions: list,
                                                leaders: list) -> None:
    request = build.leader_and_isr_request(version, partitions, leaders)
    data = encode_leader_and_isr_request(request, version)
    assert leader_and_isr_request_body_size(version, partitions, leaders) == len(data)
    assert decode_leader_and_isr_request(data, version) == normalize_struct(
        LEADER_AND_ISR_REQUEST, request, version)
    topics = [(name, sum(1 for p in partitions if p[0] == name))
              for name in dict.fromkeys(p[0] for p in partitions)]
    response = build.leader_and_isr_response(version, topics)
    data = encode_leader_and_isr_response(response, version)
    assert leader_and_isr_response_body_size(version, topics) == len(data)
    assert decode_leader_and_isr_response(data, version) == normalize_struct(
        LEADER_AND_ISR_RESPONSE, response, version)


@given(version=st.sampled_from(list(UPDATE_METADATA.versions)),
       partitions=st.lists(st.tuples(NAMES, COUNT, COUNT, COUNT), max_size=12),
       brokers=st.lists(st.tuples(HOSTS, HOSTS, st.none() | HOSTS), max_size=4))
def test_update_metadata_sizes_match_the_encoder(version: int, partitions: list,
                                                 brokers: list) -> None:
    request = build.update_metadata_request(version, partitions, brokers)
    data = encode_update_metadata_request(request, version)
    assert update_metadata_request_body_size(version, partitions, brokers) == len(data)
    assert decode_update_metadata_request(data, version) == normalize_struct(
        UPDATE_METADATA_REQUEST, request, version)
    data = encode_update_metadata_response(UpdateMetadataResponse(0), version)
    assert update_metadata_response_body_size(version) == len(data)
    assert decode_update_metadata_response(data, version) == UpdateMetadataResponse(0)


@given(version=st.sampled_from(list(STOP_REPLICA.versions)),
       partitions=st.lists(st.tuples(NAMES, st.booleans()), max_size=12))
def test_stop_replica_sizes_match_the_encoder(version: int, partitions: list) -> None:
    request, response = build.stop_replica(version, partitions)
    data = encode_stop_replica_request(request, version)
    assert stop_replica_request_body_size(version, partitions) == len(data)
    assert decode_stop_replica_request(data, version) == normalize_struct(
        STOP_REPLICA_REQUEST, request, version)
    data = encode_stop_replica_response(response, version)
    assert stop_replica_response_body_size(version, partitions) == len(data)
    assert decode_stop_replica_response(data, version) == normalize_struct(
        STOP_REPLICA_RESPONSE, response, version)


@given(version=st.sampled_from(list(ALTER_PARTITION.versions)),
       partitions=st.lists(st.tuples(NAMES, COUNT), max_size=12))
def test_alter_partition_sizes_match_the_encoder(version: int, partitions: list) -> None:
    request, response = build.alter_partition(version, partitions)
    data = encode_alter_partition_request(request, version)
    assert alter_partition_request_body_size(version, partitions) == len(data)
    assert decode_alter_partition_request(data, version) == normalize_struct(
        ALTER_PARTITION_REQUEST, request, version)
    data = encode_alter_partition_response(response, version)
    assert alter_partition_response_body_size(version, partitions) == len(data)
    assert decode_alter_partition_response(data, version) == normalize_struct(
        ALTER_PARTITION_RESPONSE, response, version)


@pytest.mark.parametrize("version", list(CONTROLLED_SHUTDOWN.versions))
def test_controlled_shutdown_sizes_match_the_encoder(version: int) -> None:
    request = ControlledShutdownRequest(1, 40 if version >= 2 else -1)
    data = encode_controlled_shutdown_request(request, version)
    assert controlled_shutdown_request_body_size(version) == len(data)
    assert decode_controlled_shutdown_request(data, version) == normalize_struct(
        CONTROLLED_SHUTDOWN_REQUEST, request, version)
    response = ControlledShutdownResponse(0, (RemainingPartition("t", 0),
                                              RemainingPartition("topic-b", 3)))
    data = encode_controlled_shutdown_response(response, version)
    assert controlled_shutdown_response_body_size(version, ["t", "topic-b"]) == len(data)
    assert decode_controlled_shutdown_response(data, version) == response


# -- golden bytes, by hand from Kafka's JSON -----------------------------------------------------
# Controller 2 at epoch 3; partition 0 of topic "t": leader 1, leader epoch 7, ISR and replicas
# [1, 2], zkVersion 9; leader / broker 1 at host "h", port 9092 (0x2384).

def _leader_and_isr(version: int) -> LeaderAndIsrRequest:
    state = LeaderAndIsrPartitionState("t" if version < 2 else "", 0, 3, 1, 7, (1, 2), 9, (1, 2))
    leaders = (LeaderAndIsrLiveLeader(1, "h", 9092),)
    if version < 2:
        return LeaderAndIsrRequest(2, False, 3, ungrouped_partition_states=(state,),
                                   live_leaders=leaders)
    return LeaderAndIsrRequest(2, False, 3, 40, topic_states=(
        LeaderAndIsrTopicState("t", partition_states=(state,)),), live_leaders=leaders)


def test_golden_leader_and_isr_requests() -> None:
    # v0: controller id, epoch, [partition states] (topic, partition, controller epoch, leader,
    # leader epoch, [isr], zk version, [replicas]), [live leaders] (id, host, port)
    assert encode_leader_and_isr_request(_leader_and_isr(0), 0) == bytes.fromhex(
        "00000002 00000003 00000001 0001 74 00000000 00000003 00000001 00000007"
        " 00000002 00000001 00000002 00000009 00000002 00000001 00000002"
        " 00000001 00000001 0001 68 00002384")
    # v4: broker epoch; grouped by topic (v2); adding / removing replicas (v3) and is_new (v1);
    # compact arrays and strings, a tag section after each struct
    assert encode_leader_and_isr_request(_leader_and_isr(4), 4) == bytes.fromhex(
        "00000002 00000003 0000000000000028 02 0274 02 00000000 00000003 00000001 00000007"
        " 03 00000001 00000002 00000009 03 00000001 00000002 01 01 00 00 00"
        " 02 00000001 0268 00002384 00 00")


def _update_metadata(version: int) -> UpdateMetadataRequest:
    state = UpdateMetadataPartitionState("t" if version < 5 else "", 0, 3, 1, 7, (1, 2), 9,
                                         (1, 2), (2,) if version >= 4 else ())
    if version == 0:
        broker = UpdateMetadataBroker(1, "h", 9092)
    else:
        endpoint = UpdateMetadataEndpoint(9092, "h", "PLAINTEXT" if version >= 3 else "", 0)
        broker = UpdateMetadataBroker(1, endpoints=(endpoint,),
                                      rack="r" if version >= 2 else None)
    if version < 5:
        return UpdateMetadataRequest(2, controller_epoch=3, ungrouped_partition_states=(state,),
                                     live_brokers=(broker,))
    return UpdateMetadataRequest(2, controller_epoch=3, broker_epoch=40, topic_states=(
        UpdateMetadataTopicState("t", partition_states=(state,)),), live_brokers=(broker,))


def test_golden_update_metadata_requests() -> None:
    # v0: controller id, epoch, [partition states], [live brokers] (id, host, port)
    assert encode_update_metadata_request(_update_metadata(0), 0) == bytes.fromhex(
        "00000002 00000003 00000001 0001 74 00000000 00000003 00000001 00000007"
        " 00000002 00000001 00000002 00000009 00000002 00000001 00000002"
        " 00000001 00000001 0001 68 00002384")
    # v6: broker epoch and topics (v5), offline replicas (v4), endpoints (port, host, listener
    # v3, security protocol) and rack (v2); compact, tag sections
    assert encode_update_metadata_request(_update_metadata(6), 6) == bytes.fromhex(
        "00000002 00000003 0000000000000028 02 0274 02 00000000 00000003 00000001 00000007"
        " 03 00000001 00000002 00000009 03 00000001 00000002 02 00000002 00 00"
        " 02 00000001 02 00002384 0268 0a 504c41494e54455854 0000 00 0272 00 00")


def test_golden_controlled_shutdown_and_its_v0_header() -> None:
    assert encode_controlled_shutdown_request(ControlledShutdownRequest(1), 1) == bytes.fromhex(
        "00000001")
    assert encode_controlled_shutdown_request(ControlledShutdownRequest(1, 40), 3) == (
        bytes.fromhex("00000001 0000000000000028 00"))
    # v0's request header has no client_id (ControlledShutdownRequest.json)
    header = RequestHeader(0, 5, None, CONTROLLED_SHUTDOWN.key)
    assert encode_request_header(header) == bytes.fromhex("0007 0000 00000005")
    assert api_request_header_size(CONTROLLED_SHUTDOWN, 0, "1") == 8
    assert decode_request_header(bytes.fromhex("0007 0000 00000005")) == (header, 8)
    assert encode_request_header(RequestHeader(1, 5, "1", CONTROLLED_SHUTDOWN.key)) == (
        bytes.fromhex("0007 0001 00000005 0001 31"))


def test_golden_alter_partition_requests() -> None:
    def request(version: int) -> AlterPartitionRequest:
        data = (AlterPartitionPartitionData(0, 4, (1, 2), (), 0, 8) if version < 3 else
                AlterPartitionPartitionData(0, 4, (), (BrokerState(1, 30), BrokerState(2, 30)),
                                            0, 8))
        topic = (AlterPartitionTopicData("t", partitions=(data,)) if version < 2 else
                 AlterPartitionTopicData(topic_id=bytes(range(16)), partitions=(data,)))
        return AlterPartitionRequest(1, 30, (topic,))

    # v0 (AlterIsr): broker id, epoch, [topics] (name, [partitions] (index, leader epoch,
    # [new isr], current isr version)); flexible from v0
    assert encode_alter_partition_request(request(0), 0) == bytes.fromhex(
        "00000001 000000000000001e 02 0274 02 00000000 00000004 03 00000001 00000002"
        " 00000008 00 00 00")
    # v3: topic id (v2), new ISR with broker epochs, leader recovery state (v1)
    assert encode_alter_partition_request(request(3), 3) == bytes.fromhex(
        "00000001 000000000000001e 02 000102030405060708090a0b0c0d0e0f 02 00000000 00000004"
        " 03 00000001 000000000000001e 00 00000002 000000000000001e 00 00 00000008 00 00 00")
