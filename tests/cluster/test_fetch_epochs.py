"""KIP-320 (2.1+, Fetch v9+): a follower's fetch carries the leader epoch it follows, and the
broker answers FENCED_LEADER_EPOCH for an epoch older than its own and UNKNOWN_LEADER_EPOCH for
one it has not heard of (Partition.checkCurrentLeaderEpoch); the follower drops a fenced
partition until a LeaderAndIsr brings the new epoch, and backs off an unknown one
(AbstractFetcherThread.onPartitionFenced, delayPartitions). A follower told of a new epoch
with the same leader fetches again from 2.1 (Partition.makeFollower)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.cluster.fetch_epochs import check_current_leader_epoch
from rig.cluster.log import Log
from rig.cluster.messages import FetchRequestMsg, FetchResponseMsg, topic_runs
from rig.cluster.partition import FetchState
from rig.cluster.replica import Replica, Role
from rig.cluster.replica_manager import keeps_fetching
from rig.cluster.zookeeper import PartitionState
from rig.events import names
from rig.protocol.errors import FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, named
from tests.cluster.test_broker_unit import KEY, FakeFetcher, Fixture


def _replica(role: Role, epoch: int) -> Replica:
    replica = Replica(KEY, 0, (0, 1, 2), Log(), 0)
    replica.role, replica.leader_epoch = role, epoch
    return replica


@pytest.mark.parametrize("role", [Role.LEADER, Role.FOLLOWER])
def test_the_epoch_check_of_a_leader_or_a_follower(role: Role) -> None:
    replica = _replica(role, 3)
    assert check_current_leader_epoch(replica, 2) == FENCED_LEADER_EPOCH
    assert check_current_leader_epoch(replica, 4) == UNKNOWN_LEADER_EPOCH
    assert check_current_leader_epoch(replica, 3) == 0
    assert check_current_leader_epoch(replica, -1) == 0  # none sent: nothing to check


def test_no_partition_no_epoch_check() -> None:
    """A broker with no replica, or one not told its role since a restart, has no Partition:
    the answer is the not-leader one, not an epoch error."""
    assert check_current_leader_epoch(None, 0) == 0
    assert check_current_leader_epoch(_replica(Role.NONE, -1), 5) == 0


def _fetch(one: Fixture, epoch: int, *, offset: int = 0, version: int = 12,
           updates: bool = True, max_wait_ms: int = 500) -> FakeFetcher:
    """A fetch of follower 1 at `epoch` (with `updates=False`, an incremental request that
    lists nothing: the epoch is the one it sent before)."""
    fetcher = FakeFetcher(1)
    keys = {KEY: None}
    client = one.sessions.new_client()
    state = {KEY: FetchState(offset, current_leader_epoch=epoch)} if updates else {}
    one.broker.on_fetch(FetchRequestMsg(fetcher, version, client.next_request(keys, keys, 12),
                                        keys, topic_runs(keys), state, max_wait_ms, 1))
    return fetcher


def _answer(one: Fixture, fetcher: FakeFetcher) -> FetchResponseMsg:
    one.wire.deliver_all()
    [response] = fetcher.responses
    return response


def _leader_at(epoch: int, **config: Any) -> Fixture:
    one = Fixture(min_isr=1, **config)
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, epoch, (0, 1, 2), epoch)})
    one.produce(acks=1)  # LEO 10
    return one


def test_an_older_epoch_is_fenced_and_answered_at_once_without_records() -> None:
    one = _leader_at(2)
    response = _answer(one, _fetch(one, 1))
    assert response.errors == {KEY: FENCED_LEADER_EPOCH}
    assert response.fenced == {KEY: 1} and not response.records
    # Not progress: the leader did not record the follower's offset.
    assert one.broker.replicas[KEY].follower(1).log_end_offset == -1


def test_a_newer_epoch_is_unknown() -> None:
    one = _leader_at(2)
    assert _answer(one, _fetch(one, 3)).errors == {KEY: UNKNOWN_LEADER_EPOCH}


def test_the_same_epoch_reads() -> None:
    one = _leader_at(2)
    response = _answer(one, _fetch(one, 2))
    assert response.errors == {} and KEY in response.records


@pytest.mark.parametrize("version, config", [(8, {}), (12, {"fetch_leader_epoch_checked": False})])
def test_no_check_before_fetch_v9_or_before_kafka_2_1(version: int, config: dict[str, Any]
                                                       ) -> None:
    one = _leader_at(2, **config)
    response = _answer(one, _fetch(one, 1, version=version))
    assert response.errors == {} and KEY in response.records


def test_a_partition_the_request_does_not_list_is_checked_at_the_epoch_it_was_sent_with() -> None:
    """Kafka checks every partition of the session on every fetch, at the epoch it was last
    listed with: the leader moved to a new epoch after the follower's last listing."""
    one = _leader_at(2)
    assert _answer(one, _fetch(one, 2)).errors == {}
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 3, (0, 1), 3)})
    assert _answer(one, _fetch(one, 0, updates=False)).errors == {KEY: FENCED_LEADER_EPOCH}


def test_a_parked_fetch_whose_epoch_went_stale_is_completed_by_the_next_change() -> None:
    """DelayedFetch.tryComplete: FencedLeaderEpochException → forceComplete."""
    one = _leader_at(2)
    fetcher = _fetch(one, 2, offset=10)  # at the log end: parked
    one.wire.deliver_all()
    assert fetcher.responses == []
    one.broker.on_leader_and_isr(1, {KEY: PartitionState(0, 3, (0, 1, 2), 3)})
    one.wire.deliver_all()
    assert fetcher.responses == []  # (Kafka's makeLeader completes no fetch)
    one.produce(acks=1)
    assert _answer(one, fetcher).errors == {KEY: FENCED_LEADER_EPOCH}


@pytest.mark.parametrize("rule, moves", [("never", (False, False)), ("beyond-next", (False, True)),
                                         ("any", (True, True))])
def test_which_new_epoch_makes_a_follower_fetch_again(rule: str, moves: tuple[bool, bool]
                                                      ) -> None:
    """Partition.makeFollower with the same leader: 1.1 never, 2.0 past the next epoch, 2.1+
    any new one."""
    assert (not keeps_fetching(rule, 4, 5), not keeps_fetching(rule, 4, 6)) == moves


def test_the_profiles_carry_the_kip_320_rules(write_scenario: Callable[[str, str], Path]
                                              ) -> None:
    from rig.scenario.profiles import profile
    assert [profile(v).follower_refetch_on_new_epoch for v in ("1.1", "2.0", "2.1", "3.9")] == [
        "never", "beyond-next", "any", "any"]
    assert [profile(v).fetch_leader_epoch_checked for v in ("2.0", "2.1")] == [False, True]
    # ... and a variant's brokers get them from its `kafka:` (BrokerConfig's defaults are 2.1+).
    for kafka, checked, rule in (("2.0", False, "beyond-next"), ("2.4", True, "any")):
        [variant] = load_scenario(write_scenario(MISSED.format(kafka=kafka), "p.yaml")).variants
        config = variant.broker_config(1)
        assert (config.fetch_leader_epoch_checked, config.follower_refetch_on_new_epoch) == (
            checked, rule)


# -- a whole cluster -----------------------------------------------------------------------------
# Broker 0 is the controller and hosts nothing; t-0 lives on 1 (leader), 2 and 3. From 3 s the
# controller cannot reach broker 3. Broker 2 crashes at 4 s; when its session expires the
# controller takes it out of the ISR at a new leader epoch and tells brokers 1 and 3, but only 1
# hears it until the cut heals at 23 s.
MISSED = """
name: missed
duration: 45s
kafka: "{kafka}"
cluster:
  brokers: 4
  config: {{min.insync.replicas: 2, replica.lag.time.max.ms: 10s,
            zookeeper.session.timeout.ms: 6s}}
topics:
  - {{name: t, partitions: 1, replication_factor: 3, assignment: [[1, 2, 3]]}}
workload:
  producers:
    - {{topic: t, rate: 100, acks: all, linger: 20ms}}
faults:
  - {{kind: link, between: [0, 3], loss: 1.0, at: 3s, heal_after: 20s}}
  - {{kind: crash, broker: 2, at: 4s, restart_after: 30s}}
"""


def _missed(write_scenario: Callable[[str, str], Path], tmp_path: Path, kafka: str
            ) -> list[dict[str, Any]]:
    [variant] = load_scenario(write_scenario(MISSED.format(kafka=kafka), "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "missed")
    return events


def test_a_follower_that_missed_a_new_epoch_is_fenced_until_it_hears_of_it(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    events = _missed(write_scenario, tmp_path, "2.4")
    [shrink] = [e for e in named(events, names.ISR_SHRINK) if e["by"] == "controller"]
    assert shrink["removed"] == [2]
    fenced = named(events, names.FETCHER_FENCED)
    assert fenced and all(e["broker"] == 3 and e["leader"] == 1 and e["epoch"] == 0
                          for e in fenced)
    assert shrink["t_ms"] < fenced[0]["t_ms"] < shrink["t_ms"] + 1000
    # Broker 3 stops fetching: the leader takes it out of the ISR after the lag time ...
    [dropped] = [e for e in named(events, names.ISR_SHRINK) if e["removed"] == [3]]
    assert dropped["by"] == "leader" and dropped["t_ms"] > fenced[0]["t_ms"] + 9_000
    # ... and it follows epoch 1 once the controller's LeaderAndIsr gets through (23 s).
    [again] = [e for e in named(events, names.REPLICA_BECOME_FOLLOWER)
               if e["broker"] == 3 and e["t_ms"] > 3_000]
    assert again["epoch"] == 1 and again["leader"] == 1 and again["t_ms"] >= 23_000
    assert any(e["added"] == [3] and e["t_ms"] > again["t_ms"]
               for e in named(events, names.ISR_EXPAND))


@pytest.mark.parametrize("kafka", ["1.1", "2.0"])
def test_before_2_1_the_follower_keeps_fetching_at_its_old_epoch(
        write_scenario: Callable[[str, str], Path], tmp_path: Path, kafka: str) -> None:
    events = _missed(write_scenario, tmp_path, kafka)
    assert named(events, names.FETCHER_FENCED) == []
    assert not [e for e in named(events, names.ISR_SHRINK) if e["removed"] == [3]]
    # The new epoch (one past its own) does not restart its fetching.
    assert not [e for e in named(events, names.REPLICA_BECOME_FOLLOWER)
                if e["broker"] == 3 and e["t_ms"] > 3_000]
