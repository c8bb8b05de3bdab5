"""Property: under leader epochs, acks=all and min.insync.replicas=2, no schedule of process
faults loses an acknowledged record or lets replicas diverge.

Power loss is left out on purpose: Kafka does not fsync by default, so losing acknowledged data
to a power loss on several replicas is within its contract (docs/kafka.md §5). Every other fault
kind is drawn: crashes with restarts, controlled shutdowns, stalls, network partitions
(ZooKeeper or the producer included), session expiries and controller failovers, at random
times, overlapping freely.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rig.checks import Status
from rig.scenario.load import load_scenario
from rig.scenario.profiles import VERSIONS
from rig.simulate import simulate
from tests.examples import examples

BROKERS = (0, 1, 2)


def _fault(kind: str, at_s: float, data: st.DataObject,
           nodes: tuple[int | str, ...] = (*BROKERS, "zk")) -> dict[str, Any]:
    """One fault; `nodes` are what a network partition may cut off (the controller's node
    is "zk", or "controller" in KRaft)."""
    fault: dict[str, Any] = {"kind": kind, "at": f"{int(at_s * 1000)}ms"}
    if kind in ("crash", "controlled-shutdown"):
        fault["broker"] = data.draw(st.sampled_from(BROKERS))
        fault["restart_after"] = f"{data.draw(st.integers(200, 15_000))}ms"
    elif kind == "stall":
        fault["broker"] = data.draw(st.sampled_from(BROKERS))
        fault["heal_after"] = f"{data.draw(st.integers(100, 12_000))}ms"
    elif kind == "zk-session-expiry":
        fault["broker"] = data.draw(st.sampled_from(BROKERS))
    elif kind == "network-partition":
        alone = data.draw(st.sampled_from([*nodes, {"producer": "app"}]))
        fault["groups"] = [[alone], [n for n in nodes if n != alone]]
        fault["heal_after"] = f"{data.draw(st.integers(200, 15_000))}ms"
    return fault


def _scenario(faults: list[dict[str, Any]], seed: int, kafka: str = "2.4") -> dict[str, Any]:
    return {
        "name": "property", "seed": seed, "duration": "30s", "kafka": kafka, "quiesce": "90s",
        "cluster": {"brokers": 3, "config": {"min.insync.replicas": 2,
                                             "replica.lag.time.max.ms": "10s",
                                             "zookeeper.session.timeout.ms": "6s"}},
        "topics": [{"name": "t", "partitions": 3, "replication_factor": 3}],
        "workload": {"producers": [{"name": "app", "topic": "t", "rate": 300, "acks": "all",
                                    "keys": {"uniform": 50}, "linger": "20ms"}]},
        "faults": faults,
        "strategies": {"replication": "leader-epoch", "fetch_session": "incremental"},
    }


def draw_faults(data: st.DataObject, kinds: list[str],
                fault: Callable[[str, float, st.DataObject], dict[str, Any]],
                ) -> list[dict[str, Any]]:
    """One to four faults of `kinds`, each at a random time in the first 25 s."""
    count = data.draw(st.integers(1, 4))
    return [fault(data.draw(st.sampled_from(kinds)), data.draw(st.floats(1.0, 25.0)), data)
            for _ in range(count)]


SAFETY = ("no-acked-loss", "replicas-agree", "one-leader-per-epoch")


def check_schedule(folder: Path, document: dict[str, Any],
                   checks: tuple[str, ...] = SAFETY) -> None:
    """Simulate `document` and require the safety `checks` to hold."""
    path = folder / "scenario.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    result = simulate(load_scenario(path).variants[0], folder / "events.jsonl")
    statuses = {check.name: check for check in result.checks}
    for name in checks:
        assert statuses[name].status is Status.OK, (document["faults"], name,
                                                     statuses[name].violations[:3],
                                                     statuses[name].note)


@pytest.mark.slow
@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_no_acknowledged_record_is_lost(tmp_path_factory: pytest.TempPathFactory,
                                         data: st.DataObject, seed: int) -> None:
    faults = draw_faults(data, ["crash", "controlled-shutdown", "stall", "network-partition",
                                "zk-session-expiry", "controller-failover"], _fault)
    check_schedule(tmp_path_factory.mktemp("prop"), _scenario(faults, seed))


# Every ZooKeeper-era profile rig models (the KRaft ones have their own property test), each
# with its own version rules: ISR expiry, election order, the epoch cache's answers, KIP-380's
# bounce detection, a restart inside the old session, 3.7's min ISR rules. The faults are drawn
# as above, fewer per profile.
# From 0.11 (KIP-101): before it there are no leader epochs, and unclean election is on by
# default, so acknowledged writes can be lost there (scenarios/jepsen-2013.yaml).
ZOOKEEPER_PROFILES = tuple(v for v in VERSIONS
                           if (0, 11) <= tuple(int(p) for p in v.split(".")) < (4,))


@pytest.mark.slow
@pytest.mark.parametrize("kafka", ZOOKEEPER_PROFILES)
@settings(max_examples=examples(1), deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_no_acknowledged_record_is_lost_on_any_profile(
        tmp_path_factory: pytest.TempPathFactory, kafka: str, data: st.DataObject,
        seed: int) -> None:
    faults = draw_faults(data, ["crash", "controlled-shutdown", "stall", "network-partition",
                                "zk-session-expiry", "controller-failover"], _fault)
    document = _scenario(faults, seed, kafka)
    del document["strategies"]["fetch_session"]  # the profile's (sessions need Fetch v7, 1.1)
    check_schedule(tmp_path_factory.mktemp("prop"), document)
