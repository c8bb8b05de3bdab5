"""A broker restarted while ZooKeeper still holds its crashed process's session, and a controller
that reads /brokers/ids late (docs/kafka.md §11).

A crash (kill -9, a power loss) closes nothing: ZooKeeper keeps the session, and the broker's
ephemeral /brokers/ids/<id>, until zookeeper.session.timeout.ms after the last heartbeat. A new
process of the broker cannot create that node: from 0.9 its startup fails and it exits
(ZKCheckedEphemeral; KafkaZkClient.CheckedEphemeral's NODEEXISTS from 1.1: "Error while creating
ephemeral at /brokers/ids/1, node already exists and owner … does not match current session");
0.8.2 sleeps a session timeout and creates it again until the node is gone
(ZkUtils.createEphemeralPathExpectConflictHandleZKBug). Until the old session expires the
controller believes the broker alive, so the partitions it led stay without a working leader.

The controller learns of broker changes by reading /brokers/ids when its watch fires
(KafkaController.processBrokerChange): a broker that went and registered again before that read
is, from 2.2 (KIP-380), a bounce it handles as a failure and a start; before 2.2 it is not seen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run, fuzzed_scenario, named

# Broker 2 (the leader of t-0) crashes at 5 s and is started again 1 s later; its last heartbeat
# was at 4 s, so its 6 s session expires at 10 s. At 11 s it is started once more (a
# supervisor's second try: a crash fault on a stopped broker only restarts it).
QUICK_RESTART = """\
  - {kind: crash, at: 5s, broker: 2, restart_after: 1s}
  - {kind: crash, at: 11s, broker: 2, restart_after: 0s}"""


def _run(write_scenario: Callable[[str, str], Path], tmp_path: Path, faults: str,
         kafka: str) -> list[dict]:
    text = fuzzed_scenario("restart", faults, kafka=kafka, brokers=3)
    [variant] = load_scenario(write_scenario(text, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "restart")
    return events


def _led_by(events: list[dict], broker: int) -> list[int]:
    return [e["partition"] for e in named(events, names.PARTITION_ASSIGNED)
            if e["leader"] == broker]


def _replicas_on(events: list[dict], broker: int) -> int:
    return len([e for e in named(events, names.PARTITION_ASSIGNED) if broker in e["replicas"]])


@pytest.mark.parametrize("kafka", ["1.0", "2.4", "3.9"])
def test_a_restart_inside_the_old_session_fails_from_0_9(
        write_scenario: Callable[[str, str], Path], tmp_path: Path, kafka: str) -> None:
    events = _run(write_scenario, tmp_path, QUICK_RESTART, kafka)
    first, second = named(events, names.BROKER_RESTART)
    [failed] = named(events, names.BROKER_STARTUP_FAILED)
    # The create of /brokers/ids/2 comes back NODEEXISTS one round trip to ZooKeeper later.
    assert (first["t_ms"], first["incarnation"]) == (6000.0, 1)
    assert failed == {**failed, "broker": 2, "incarnation": 1, "reason": "node-exists",
                      "owner": 0, "t_ms": 6001.002}
    # The process is gone: it sends nothing until it is started again.
    assert not [e for e in named(events, names.FETCH_REQUEST)
                if e.get("source") == 2 and failed["t_ms"] < e["t_ms"] < second["t_ms"]]
    # The controller hears of the crash only when the old session expires: the partitions
    # broker 2 led get new leaders then, not at the restart.
    [expired] = named(events, names.ZK_SESSION_EXPIRED)
    assert (expired["broker"], expired["t_ms"]) == (2, 10000.501)
    led = _led_by(events, 2)
    elected = [e for e in named(events, names.LEADER_ELECTED) if e["partition"] in led]
    assert led and sorted(e["partition"] for e in elected) == sorted(led)
    assert all(e["t_ms"] == 10001.002 and e["reason"] == "broker-failure" for e in elected)
    # Started after the expiry, it registers, follows, and is back in every ISR.
    assert second["t_ms"] == 11000.0 and second["incarnation"] == 2
    back = [e for e in named(events, names.ISR_EXPAND) if 2 in e["added"]]
    assert len(back) == _replicas_on(events, 2) and all(e["t_ms"] < 12000 for e in back)


def test_0_8_2_waits_a_session_timeout_and_registers_again(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    faults = "  - {kind: crash, at: 5s, broker: 2, restart_after: 1s}"
    events = _run(write_scenario, tmp_path, faults, "0.8.2")
    assert not named(events, names.BROKER_STARTUP_FAILED)
    [retry] = named(events, names.ZK_REGISTRATION_RETRY)
    assert retry == {**retry, "broker": 2, "incarnation": 1, "owner": 0, "retry_ms": 6000,
                     "t_ms": 6001.002}
    # The old session expires at 10 s; the retry at 12 s creates the node, the controller
    # starts the broker (LeaderAndIsr), and it rejoins every ISR.
    [expired] = named(events, names.ZK_SESSION_EXPIRED)
    assert expired["t_ms"] == 10000.501
    followed = [e for e in named(events, names.REPLICA_BECOME_FOLLOWER) if e["broker"] == 2]
    assert followed and min(e["t_ms"] for e in followed) == 12002.505
    assert len([e for e in named(events, names.ISR_EXPAND) if 2 in e["added"]]) == (
        _replicas_on(events, 2))


# The controller (broker 0) is cut off from ZooKeeper and the other brokers from 1.0 s to 2.2 s.
# Broker 1's session expires at 1.0 s (the zk-session-expiry fault) and its process, still
# running, registers again at its next heartbeat (2.0 s): a new broker epoch.
BOUNCE = """\
  - {kind: network-partition, at: 1000ms, groups: [[0], [1, 2, zk]], heal_after: 1200ms}
  - {kind: zk-session-expiry, at: 1000ms, broker: 1}"""


@pytest.mark.parametrize(("kafka", "seen"), [("2.1", False), ("2.4", True)])
def test_a_controller_that_reads_brokers_late_sees_a_bounce_from_2_2(
        write_scenario: Callable[[str, str], Path], tmp_path: Path, kafka: str,
        seen: bool) -> None:
    """Found first by the property test of tests/properties (with a restart inside the
    session, which Kafka refuses): the watch's news must reach the controller once the link
    heals, or it never learns of the change."""
    events = _run(write_scenario, tmp_path, BOUNCE, kafka)
    [expired] = named(events, names.ZK_SESSION_EXPIRED)
    assert (expired["broker"], expired["reason"]) == (1, "injected")
    shrinks = [e for e in named(events, names.ISR_SHRINK)
               if e["by"] == "controller" and e["removed"] == [1]]
    if seen:
        # Failed, then started (KIP-380): out of every ISR when the link heals, as a dead
        # broker's replicas go OfflineReplica, then back in once it has caught up.
        assert len(shrinks) == _replicas_on(events, 1)
        assert all(2200 < e["t_ms"] < 2210 for e in shrinks)
        back = [e for e in named(events, names.ISR_EXPAND) if 1 in e["added"]]
        assert len(back) == len(shrinks) and all(e["t_ms"] > 2200 for e in back)
        assert named(events, names.CONTROLLER_BOUNCE_UNSEEN) == []
    else:
        # The same ids before and after: nothing to do; broker 1 stays in every ISR. The
        # controller saw a new broker epoch under the same id and did nothing (KAFKA-1120).
        assert shrinks == []
        [unseen] = named(events, names.CONTROLLER_BOUNCE_UNSEEN)
        assert (unseen["broker"], unseen["controller"]) == (1, 0) and unseen["t_ms"] > 2200
