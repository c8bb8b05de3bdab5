"""A follower whose fetch finds the leader's log end below its own: with unclean leader election
allowed it truncates to the leader's end; with it off its broker halts rather than throw
records away (ReplicaFetcherThread.handleOffsetOutOfRange: "Halting because log truncation is
not allowed", Kafka 0.8.2; docs/kafka.md §11)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.fetcher import ReplicaFetcher
from rig.cluster.messages import FetchResponseMsg
from rig.cluster.replica import Replica, Role
from rig.protocol.errors import OFFSET_OUT_OF_RANGE
from rig.scenario.broker_config import BrokerConfig
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


def _follower(host: HaltingHost) -> ReplicaFetcher:
    replica = Replica(WALKING, 1, (0, 1), build([(0, 2, SHARED), (0, 3, FOLLOWER)]), 0,
                      role=Role.FOLLOWER)
    broker = SimpleNamespace(id=1, config=BrokerConfig("0.8.2", 0), alive=True, stalled=False,
                             now_ms=0.0, fetch_stuck=False, replicas={WALKING: replica},
                             replica_manager=SimpleNamespace(hw_dirty={}))
    fetcher = ReplicaFetcher(host, broker, 0, 0, Sessionless().new_client())  # type: ignore
    fetcher.add_partition(WALKING, TruncateTo(5), wake=False)
    return fetcher


def _out_of_range(fetcher: ReplicaFetcher) -> None:
    fetcher._apply(FetchResponseMsg(0, 0, 1, 0, errors={WALKING: OFFSET_OUT_OF_RANGE}))


@pytest.mark.parametrize("unclean", [True, False])
def test_leader_log_end_below_the_followers(unclean: bool) -> None:
    host = HaltingHost(unclean)
    fetcher = _follower(host)
    _out_of_range(fetcher)
    replica = fetcher.broker.replicas[WALKING]
    if unclean:  # truncate to the leader's end and go on fetching from there
        assert host.halted == [] and replica.leo == 2
        assert fetcher.partitions[WALKING].fetch_offset == 2
    else:  # the broker stops; nothing is truncated
        assert host.halted == [(1, WALKING, 0, 2, 5)] and replica.leo == 5


def test_a_leader_ahead_of_the_follower_never_halts_it() -> None:
    # The fetch offset is out of range the other way (below the leader's log start): no halt.
    host = HaltingHost(unclean=False)
    host.leader.replicas[WALKING].log = build([(0, 2, SHARED), (0, 6, SHARED)])
    fetcher = _follower(host)
    _out_of_range(fetcher)
    assert host.halted == []
