"""A follower's OffsetsForLeaderEpoch and ListOffsets are counted at their exact wire bytes: the
size prefix, the header (the fetcher's client.id) and the body at the version its
inter.broker.protocol.version gives (ReplicaFetcherThread / MetadataVersion), checked here
against the encoder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.fetcher import ReplicaFetcher
from rig.cluster.follower_truncation import LATEST
from rig.cluster.log import Log
from rig.cluster.replica import Replica, Role
from rig.protocol import (
    LIST_OFFSETS,
    OFFSETS_FOR_LEADER_EPOCH,
    RequestHeader,
    ResponseHeader,
    encode_request_header,
    encode_response_header,
    frame,
)
from rig.protocol.offsets import (
    EpochEndOffsetResponse,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ListOffsetsTopic,
    ListOffsetsTopicResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
    OffsetForLeaderTopicResult,
    encode_list_offsets_request,
    encode_list_offsets_response,
    encode_offset_for_leader_epoch_request,
    encode_offset_for_leader_epoch_response,
)
from rig.scenario.api_versions import follower_epoch_version, follower_list_offsets_version
from rig.scenario.broker_config import BrokerConfig
from rig.scenario.load import load_scenario
from rig.scenario.profiles import VERSIONS, fetch_version_for_ibp
from rig.strategies.fetch_session.sessionless import Sessionless
from rig.strategies.replication.base import AskLeader
from tests.cluster.fetcher_host import FetcherHost, fake_log
from tests.strategies.test_replication_strategies import FOLLOWER, LEADER, SHARED, build

KEY = ("topic-a", 1)
CLIENT = "broker-1-fetcher-0"


class Host(FetcherHost):
    """A leader (broker 0) and a wire that keeps each message's bytes."""

    def __init__(self, leader_log: Log) -> None:
        super().__init__()
        self.log = fake_log(lambda event, **fields: None)
        leader = Replica(KEY, 0, (0, 1), leader_log, 0, role=Role.LEADER)
        self.brokers = {0: SimpleNamespace(
            alive=True, replicas={KEY: leader},
            on_fetch=lambda request: None,
            on_epoch_request=lambda key, epoch: leader_log.end_offset_for_epoch(epoch))}
        self.sizes: list[int] = []

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False, kind: str = "control") -> None:
        self.sizes.append(nbytes)
        self.wire.append(("to-leader" if dst == 0 else "to-follower", deliver))


def _fetcher(kafka: str) -> tuple[Host, ReplicaFetcher]:
    # (Truncation on fetch off: from 2.8 a follower asks OffsetsForLeaderEpoch only of a log
    # without epochs, AbstractFetcherThread's Truncating state; the question is the same.)
    config = BrokerConfig(kafka, fetch_version_for_ibp(kafka),
                          list_offsets_version=follower_list_offsets_version(kafka, kafka),
                          offsets_for_leader_epoch_version=follower_epoch_version(kafka),
                          truncation_on_fetch=False)
    host = Host(build([(0, 2, SHARED), (1, 1, LEADER), (3, 0, LEADER)]))
    replica = Replica(KEY, 1, (0, 1), build([(0, 2, SHARED), (2, 2, FOLLOWER)]), 0,
                      role=Role.FOLLOWER)
    broker = SimpleNamespace(id=1, config=config, alive=True, stalled=False, fetch_stuck=False,
                             broker_epoch=0,
                             replicas={KEY: replica},
                             replica_manager=SimpleNamespace(hw_dirty={}))
    fetcher = ReplicaFetcher(host, broker, 0, 0, Sessionless().new_client())  # type: ignore
    return host, fetcher


def _framed_request(api: Any, version: int, body: bytes) -> int:
    return len(frame(encode_request_header(RequestHeader(version, 0, CLIENT, api.key)), body))


def _framed_response(api: Any, version: int, body: bytes) -> int:
    return len(frame(encode_response_header(ResponseHeader(0), version, api), body))


@pytest.mark.parametrize("kafka", ["0.11", "2.0", "2.1", "2.3", "2.8", "3.9", "4.1"])
def test_offsets_for_leader_epoch_is_counted_at_its_wire_bytes(kafka: str) -> None:
    host, fetcher = _fetcher(kafka)
    version = follower_epoch_version(kafka)
    fetcher.add_partition(KEY, AskLeader(2), wake=False)
    fetcher.send()
    host.wire.pop(0)[1]()  # the question reaches the leader, which answers (1, 3)
    request = OffsetForLeaderEpochRequest(replica_id=1, topics=(OffsetForLeaderTopic(
        KEY[0], (OffsetForLeaderPartition(KEY[1], 0, 2),)),))
    response = OffsetForLeaderEpochResponse(topics=(OffsetForLeaderTopicResult(
        KEY[0], (EpochEndOffsetResponse(0, KEY[1], 1, 3),)),))
    assert host.sizes == [
        _framed_request(OFFSETS_FOR_LEADER_EPOCH, version,
                        encode_offset_for_leader_epoch_request(request, version)),
        _framed_response(OFFSETS_FOR_LEADER_EPOCH, version,
                         encode_offset_for_leader_epoch_response(response, version))]


@pytest.mark.parametrize("kafka", ["0.8.2", "0.10", "0.11", "2.0", "2.1", "2.3", "2.8", "3.0",
                                   "3.5", "3.9", "4.0", "4.2"])
def test_list_offsets_is_counted_at_its_wire_bytes(kafka: str) -> None:
    host, fetcher = _fetcher(kafka)
    version = follower_list_offsets_version(kafka, kafka)
    fetcher.out_of_range[KEY] = LATEST
    fetcher.send()
    host.wire.pop(0)[1]()
    request = ListOffsetsRequest(replica_id=1, topics=(ListOffsetsTopic(
        KEY[0], (ListOffsetsPartition(KEY[1], 3, -1),)),))
    response = ListOffsetsResponse(topics=(ListOffsetsTopicResponse(KEY[0], (
        ListOffsetsPartitionResponse(KEY[1], 0, (4,), -1, 4, 3),)),))
    assert host.sizes == [
        _framed_request(LIST_OFFSETS, version, encode_list_offsets_request(request, version)),
        _framed_response(LIST_OFFSETS, version, encode_list_offsets_response(response, version))]


def test_the_versions_follow_the_inter_broker_protocol(
        write_scenario: Callable[[str, str], Path]) -> None:
    at_own_ibp = {v: (follower_list_offsets_version(v, v), follower_epoch_version(v))
                  for v in VERSIONS}
    assert at_own_ibp == {
        "0.8.2": (0, 0), "0.9": (0, 0), "0.10": (0, 0), "0.11": (1, 0), "1.0": (1, 0),
        "1.1": (1, 0), "2.0": (3, 1), "2.1": (4, 2), "2.3": (5, 3), "2.4": (5, 3), "2.5": (5, 3),
        "2.7": (5, 3), "2.8": (6, 4), "3.0": (7, 4), "3.1": (7, 4), "3.3": (7, 4), "3.4": (7, 4),
        "3.5": (8, 4), "3.6": (8, 4), "3.7": (8, 4), "3.8": (8, 4), "3.9": (9, 4),
        "4.0": (10, 4), "4.1": (10, 4), "4.2": (11, 4)}
    # Before 2.0 a broker sends v1 from IBP 0.10.1; from 2.0, IBP 0.11 is v2 (KAFKA_0_11_0_IV0).
    assert follower_list_offsets_version("1.1", "0.10.1") == 1
    assert follower_list_offsets_version("2.0", "0.11") == 2
    assert follower_list_offsets_version("2.8", "2.7") == 5
    # A cluster's config takes them from its release and IBP.
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    config = variant.config
    assert (config.list_offsets_version, config.offsets_for_leader_epoch_version) == (5, 3)


SCENARIO = """
name: pinned-ibp
duration: 1s
kafka: "3.0"
cluster: {brokers: 2, config: {inter.broker.protocol.version: "2.7"}}
topics: [{name: t, partitions: 1, replication_factor: 2}]
"""
