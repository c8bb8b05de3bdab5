"""KRaft and unclean.leader.election.enable: until 3.9 the controller never read it
(ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic returned false; only an
ElectLeaders request of type UNCLEAN elected an out-of-sync replica), so a partition whose ISR
is gone stays offline whatever the topic says; from 3.9 (KAFKA-12670) the fencing that leaves it
leaderless elects the out-of-sync replica."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rig.events import names
from rig.scenario.load import load_scenario
from tests.cluster.simulated import checked_run

SCENARIO = """
name: kraft-unclean
duration: 40s
kafka: "{kafka}"
strategies: {{controller: kraft}}
cluster:
  brokers: 3
  config: {{min.insync.replicas: 1, replica.lag.time.max.ms: 2s}}
topics:
  - name: t
    assignment: [[0, 1]]
    config: {{unclean.leader.election.enable: true}}
workload:
  producers:
    - {{name: app, topic: t, rate: 100, acks: 1, linger: 20ms}}
faults:
  - {{kind: link, between: [0, 1], loss: 1.0, at: 2s, heal_after: 30s,
     description: follower 1 falls out of the ISR}}
  - {{kind: crash, broker: 0, at: 10s, restart_after: 15s, description: the leader dies}}
"""


def _events(write: Callable[[str, str], Path], tmp_path: Path,
            kafka: str) -> list[dict[str, Any]]:
    scenario = load_scenario(write(SCENARIO.format(kafka=kafka), "s.yaml"))
    [variant] = scenario.variants
    return checked_run(variant, tmp_path, scenario.name)[0]


@pytest.mark.parametrize("kafka", ["3.8", "3.9"])
def test_the_out_of_sync_follower_is_elected_only_from_3_9(
        write_scenario: Callable[[str, str], Path], tmp_path: Path, kafka: str) -> None:
    events = _events(write_scenario, tmp_path, kafka)
    [shrink] = [e for e in events if e["event"] == names.ISR_SHRINK]
    assert shrink["removed"] == [1] and shrink["t_ms"] < 10_000
    fenced = next(e for e in events if e["event"] == names.BROKER_FENCED and e["broker"] == 0)
    elected = [e for e in events if e["event"] == names.LEADER_ELECTED]
    if kafka == "3.9":
        assert elected[0]["leader"] == 1 and elected[0]["election"] == "unclean"
        assert elected[0]["t_ms"] == fenced["t_ms"]
    else:
        [offline] = [e for e in events if e["event"] == names.PARTITION_OFFLINE]
        assert offline["t_ms"] == fenced["t_ms"]
        # no leader but broker 0, once it is back (unfenced after its restart at 25 s)
        assert elected and all(e["leader"] == 0 for e in elected)
        assert elected[0]["t_ms"] > 25_000
