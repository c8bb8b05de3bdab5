"""A log start moved by retention is fetch-session news (KIP-227): the leader's sessions list the
partition in their next incremental response (FetchSession's CachedPartition
.maybeUpdateResponseData compares the log start offset, as it does the HW), and a follower whose
own retention moved its log start lists the partition in its next incremental request with the
new one (FetchSessionHandler compares the whole PartitionData, Fetch v5+). Before, an idle
partition's retention went unsaid in both directions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import yaml

from rig.scenario.load import load_scenario
from rig.simulate import simulate
from tests.cluster.test_coast import assert_same_run

SCENARIO = {
    "name": "log-start-session", "seed": 3, "duration": "50s", "kafka": "3.9",
    "cluster": {"brokers": 2, "config": {"log.retention.check.interval.ms": "5s"}},
    "topics": [{"name": "events", "assignment": [[0, 1]],
                "config": {"retention.ms": "10s", "segment.ms": "4s"}}],
    # 1,500 records over 30 s, then the partition is idle while retention (its task first runs
    # at 30 s) deletes its segments
    "workload": {"producers": [{"name": "p", "topic": "events", "rate": 50, "acks": "all",
                                "count": 1500, "partitioner": {"explicit": 0}}]},
    "variants": {"v": {}},
}


def _events(tmp_path: Path, mode: str = "full") -> list[dict[str, Any]]:
    path = tmp_path / f"{mode}.yaml"
    path.write_text(yaml.safe_dump({**SCENARIO, "events": mode}))
    log = tmp_path / f"{mode}.jsonl"
    simulate(load_scenario(path).variants[0], log)
    return [orjson.loads(line) for line in log.read_bytes().splitlines()]


def _next(events: list[dict[str, Any]], after: dict[str, Any], name: str) -> dict[str, Any]:
    return next(e for e in events if e["seq"] > after["seq"] and e["event"] == name
                and e["role"] == "follower")


def test_retention_on_an_idle_partition_is_listed_both_ways(tmp_path: Path) -> None:
    events = _events(tmp_path)
    last_append = max(e["t_ms"] for e in events if e["event"] == "produce.ack")
    idle = [e for e in events if e["event"] == "log.retention" and e["t_ms"] > last_append]
    assert {e["broker"] for e in idle} == {0, 1} and len(idle) >= 4
    for retention in idle:
        if retention["broker"] == 0:  # the leader's: its answer to broker 1 lists it
            response = _next(events, retention, "fetch.response")
            assert (response["broker"], response["partitions"]) == (0, 1)
        else:  # the follower's: its next request lists it (same fetch offset, new log start)
            request = _next(events, retention, "fetch.request")
            assert request["partitions"] == 1 and request["fetch_offsets"] == [
                ["events", 0, 1500]]
    # Between retentions the idle rounds list nothing.
    first, second = sorted({e["t_ms"] for e in idle})[:2]
    quiet = [e for e in events if e["event"] == "fetch.response" and e["role"] == "follower"
             and first + 1000 < e["t_ms"] < second]
    assert quiet and all(e["partitions"] == 0 for e in quiet)


def test_the_same_run_with_fetch_aggregated(tmp_path: Path) -> None:
    assert_same_run(_events(tmp_path, "full"), _events(tmp_path, "fetch-aggregated"))
