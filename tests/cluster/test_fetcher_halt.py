"""A follower's fetch out of range (ReplicaFetcherThread.handleOffsetOutOfRange before 2.1,
AbstractFetcherThread.fetchOffsetAndTruncate after; docs/kafka.md §11): the leader's log end
below the follower's, it truncates to that end, or before 2.1 (KAFKA-7414), with unclean leader
election off, its broker halts; its log end below the leader's log start, it deletes its log and
starts again at the leader's start; before 0.9.0.1 (KAFKA-2143) it does so whenever the leader
is not behind."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.fetcher import ReplicaFetcher
from rig.cluster.log import Log
from rig.cluster.messages import FetchResponseMsg
from rig.cluster.replica import Replica, Role
from rig.cluster.segment import Segment
from rig.protocol.errors import OFFSET_OUT_OF_RANGE
from rig.protocol.records import Batch
from rig.scenario.broker_config import BrokerConfig
from rig.scenario.profiles import profile
from rig.strategies.fetch_session.sessionless import Sessionless
from rig.strategies.replication.base import TruncateTo
from tests.cluster.test_fetcher_truncation import WALKING, Host
from tests.strategies.test_replication_strategies import FOLLOWER, SHARED, build


class HaltingHost(Host):
    def __init__(self, unclean: bool) -> None:
        # The new leader holds 2 records; the follower kept 5 (it led them, uncleanly replaced).
        super().__init__(build([(0, 2, SHARED)]))
        self.leader.replicas[WALKING].role = Role.LEADER
        self.unclean = unclean
        self.halted: list[tuple[Any, ...]] = []

    def unclean_election(self, key: Any) -> bool:
        return self.unclean

    def halt(self, broker_id: int, key: Any, leader: int, leader_leo: int,
             log_end_offset: int) -> None:
        self.halted.append((broker_id, key, leader, leader_leo, log_end_offset))


def _follower(host: HaltingHost, version: str = "0.8.2", own: int = 5) -> ReplicaFetcher:
    log = build([(0, 2, SHARED), (0, own - 2, FOLLOWER)]) if own > 2 else build([(0, own, SHARED)])
    replica = Replica(WALKING, 1, (0, 1), log, 0, role=Role.FOLLOWER)
    rules = profile(version)
    config = BrokerConfig(version, 0, out_of_range_halts=rules.out_of_range_halts,
                          out_of_range_restarts_log=rules.out_of_range_restarts_log)
    broker = SimpleNamespace(id=1, config=config, alive=True, stalled=False,
                             now_ms=0.0, fetch_stuck=False, replicas={WALKING: replica},
                             replica_manager=SimpleNamespace(hw_dirty={}),
                             schedule=lambda delay_us, call: None)
    fetcher = ReplicaFetcher(host, broker, 0, 0, Sessionless().new_client())  # type: ignore
    fetcher.add_partition(WALKING, TruncateTo(own), wake=False)
    return fetcher


def _out_of_range(fetcher: ReplicaFetcher) -> list[str]:
    """Answer the fetch OFFSET_OUT_OF_RANGE and deliver the ListOffsets round trips that follow;
    the messages, in order (the first fetch after them stays on the wire)."""
    fetcher._apply(FetchResponseMsg(0, 0, 1, 0, errors={WALKING: OFFSET_OUT_OF_RANGE}))
    fetcher.send()
    host = fetcher.cluster
    assert isinstance(host, HaltingHost)
    sent = []
    while fetcher.out_of_range and not host.halted:
        sent.append(host.step())
    return sent


@pytest.mark.parametrize("version", ["0.8.2", "2.0", "2.1", "3.9"])
@pytest.mark.parametrize("unclean", [True, False])
def test_leader_log_end_below_the_followers(version: str, unclean: bool) -> None:
    host = HaltingHost(unclean)
    fetcher = _follower(host, version)
    # One ListOffsets round trip: the leader's end is below ours, its start is not asked.
    assert _out_of_range(fetcher) == ["to-leader", "to-follower"]
    replica = fetcher.broker.replicas[WALKING]
    if unclean or version in ("2.1", "3.9"):  # truncate to the leader's end, fetch from there
        assert host.halted == [] and replica.leo == 2
        assert fetcher.partitions[WALKING].fetch_offset == 2
        [(event, fields)] = _changes(host)
        assert event == "replica.truncate" and fields["reason"] == "offset-out-of-range"
    else:  # the broker stops; nothing is truncated
        assert host.halted == [(1, WALKING, 0, 2, 5)] and replica.leo == 5


@pytest.mark.parametrize("version", ["0.8.2", "0.10", "3.9"])
def test_a_log_ending_below_the_leaders_start_starts_again_there(version: str) -> None:
    # Retention deleted the leader's records below 6; the follower, back, holds 0–4 (every
    # version: truncateFullyAndStartAt(leader's start)).
    host = HaltingHost(unclean=False)
    host.leader.replicas[WALKING].log = _leader_from(6, end=9)
    fetcher = _follower(host, version)
    assert _out_of_range(fetcher) == ["to-leader", "to-follower"] * 2  # its end, then start
    replica = fetcher.broker.replicas[WALKING]
    assert host.halted == []
    assert (replica.log.log_start_offset, replica.leo, replica.log.batches) == (6, 6, [])
    assert replica.high_watermark == 6 and replica.log.latest_epoch == -1
    state = fetcher.partitions[WALKING]
    assert (state.fetch_offset, state.log_start_offset) == (6, 6)
    [(event, fields)] = _changes(host)
    assert event == "replica.truncate_fully"
    assert {k: fields[k] for k in ("log_start_offset", "log_end_offset", "to_offset",
                                   "records")} == {
        "log_start_offset": 0, "log_end_offset": 5, "to_offset": 6, "records": 5}


@pytest.mark.parametrize("version", ["0.8.2", "0.9", "0.10", "2.1"])
def test_a_leader_that_caught_up_restarts_the_follower_only_before_kafka_2143(
        version: str) -> None:
    # The leader, 2 records when it answered, has grown to 6 by the time the follower (at 5)
    # asks for its end; its log starts at 0. 0.8.2 and 0.9.0.0 start the follower's log again
    # at the leader's start (0), dropping all it held; from 0.9.0.1 it fetches on from 5.
    host = HaltingHost(unclean=False)
    host.leader.replicas[WALKING].log = build([(0, 2, SHARED), (0, 6, SHARED)])
    fetcher = _follower(host, version)
    _out_of_range(fetcher)
    replica = fetcher.broker.replicas[WALKING]
    assert host.halted == []
    if version in ("0.8.2", "0.9"):
        assert (replica.log.log_start_offset, replica.leo) == (0, 0)
        assert fetcher.partitions[WALKING].fetch_offset == 0
        assert [event for event, _ in _changes(host)] == ["replica.truncate_fully"]
    else:
        assert replica.leo == 5 and fetcher.partitions[WALKING].fetch_offset == 5
        assert _changes(host) == []


def test_no_fetch_goes_while_the_list_offsets_round_trips_run() -> None:
    # The fetcher thread waits for each answer (fetchLatestOffsetFromLeader, then
    # fetchEarliestOffsetFromLeader): one message on the wire at a time, the fetch after both.
    host = HaltingHost(unclean=False)
    host.leader.replicas[WALKING].log = _leader_from(6, end=9)
    fetcher = _follower(host, "3.9")
    fetcher._apply(FetchResponseMsg(0, 0, 1, 0, errors={WALKING: OFFSET_OUT_OF_RANGE}))
    fetcher.send()
    for expected in ["to-leader", "to-follower", "to-leader", "to-follower"]:
        assert [what for what, _ in host.wire] == [expected]
        host.step()
        fetcher.send()  # a wake-up meanwhile sends nothing
    assert not fetcher.out_of_range and [what for what, _ in host.wire] == ["to-leader"]
    host.step()
    assert [what for what, _ in host.wire] == ["fetch"]  # that was the fetch, at the leader


def test_a_broker_that_no_longer_leads_answers_and_the_partition_waits_the_back_off() -> None:
    # NOT_LEADER_OR_FOLLOWER to the ListOffsets: the partition is in error, retried after
    # replica.fetch.backoff.ms with the state it had (nothing truncated).
    host = HaltingHost(unclean=False)
    fetcher = _follower(host, "3.9")
    fetcher._apply(FetchResponseMsg(0, 0, 1, 0, errors={WALKING: OFFSET_OUT_OF_RANGE}))
    fetcher.send()
    host.leader.replicas[WALKING].role = Role.FOLLOWER  # a new leader elected meanwhile
    host.step()
    host.step()
    assert not fetcher.out_of_range and WALKING in fetcher.delayed
    assert fetcher.broker.replicas[WALKING].leo == 5 and _changes(host) == []


def _changes(host: HaltingHost) -> list[tuple[str, dict[str, Any]]]:
    """The events of the follower's log changing (not its fetch requests)."""
    return [(event, fields) for event, fields in host.events if event != "fetch.request"]


def _leader_from(start: int, end: int) -> Log:
    """A leader's log of records start..end-1 (one batch each): retention deleted the rest."""
    log = Log(log_start_offset=start, log_end_offset=start, flushed=start, clean_offset=start,
              segments=[Segment(start)])
    for offset in range(start, end):
        log.append(Batch(offset, 1, 0, 40, 9, offset), 0.0)
    return log
