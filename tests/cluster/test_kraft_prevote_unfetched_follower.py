"""A KRaft voter following a leader that has not yet answered one of its Fetches grants a
pre-vote (KIP-996; FollowerState.hasFetchedFromLeader, KafkaRaftClientPreVoteTest
.testHandlePreVoteRequestAsFollower): until then the leader may be unreachable from here. Found
by `rig fuzz` on fuzz-kraft (Kafka 4.1): the active controller crashes twice in a row and each
comes back resigned in its epoch, answering every Fetch NOT_LEADER_OR_FOLLOWER yet naming
itself leader in its vote answers. rig let a voter that had just begun following such a node
reject pre-votes as if it heard from its leader; every prospective that met such an answer
began following it too, and no controller was elected again for the minute the run had left."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import FUZZ_LOAD, checked_run, named

SCENARIO = """
name: resigned-leaders
seed: 1307795872
duration: 12s
quiesce: 60s
kafka: "4.1"
cluster: {brokers: 3, controllers: 3, config: {min.insync.replicas: 2}}
LOAD
faults:
  - {kind: crash, at: 5901ms, controller: active, restart_after: 4730ms}
  - {kind: crash, at: 8504ms, controller: active, restart_after: 2849ms}
  - {kind: crash, at: 10853ms, controller: active, restart_after: 1484ms}
""".replace("LOAD\n", FUZZ_LOAD)


def test_a_follower_that_has_not_fetched_grants_a_pre_vote_and_a_controller_is_elected(
        write_scenario: Callable[[str, str], Path], tmp_path: Path) -> None:
    [variant] = load_scenario(write_scenario(SCENARIO, "s.yaml")).variants
    events, result = checked_run(variant, tmp_path, "resigned-leaders")
    restarts = [e for e in named(events, names.CONTROLLER_RESTART) if e["state"] == "resigned"]
    assert [e["node"] for e in restarts] == [3, 4]  # both former leaders come back resigned
    last = named(events, names.CONTROLLER_ELECTED)[-1]
    # Voter 3 follows the resigned node 4 without having fetched from it: it grants node 5's
    # pre-vote (and then its vote), and node 5 leads half a second after its fetch timeout.
    assert (last["node"], last["quorum_epoch"], last["votes"]) == (5, 4, [3, 5])
    assert restarts[-1]["t_ms"] < last["t_ms"] < restarts[-1]["t_ms"] + 1000
    assert result.settled
