"""The traffic ledger and its prices: a hand-counted small case, exactly (the ledger and the
pricing are plain functions over the grouped rows), and the uniform three-zone closed form on a
simulated run (Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rig import rundir
from rig.analysis.traffic import CLASSES, analyze_traffic, ledger, out_of_isr, price
from rig.cost import PROFILES, resolve
from rig.scenario.load import load_scenario
from rig.simulate import simulate
from tests.conftest import ROOT

# Zones: brokers 0 (a), 1 (b); producer p in a; consumer c in b; zk has no zone.
ZONES = {"v": {"0": "a", "1": "b", "producer-p": "a", "consumer-c": "b"}}
BROKERS = {"v": {"0", "1"}}

FETCHES = [
    # broker 1 follows broker 0: 10 requests of 100 bytes; responses 5,000 bytes of which
    # 4,000 are records.
    {"variant": "v", "role": "follower", "node": "1", "broker": "0", "catching": False,
     "up": 1000, "down": 5000, "records": 4000},
    # the same follower while out of an ISR: 300 record bytes of a 400-byte response
    {"variant": "v", "role": "follower", "node": "1", "broker": "0", "catching": True,
     "up": 50, "down": 400, "records": 300},
    # the consumer (zone b) reads from broker 1 (zone b): 2,000 bytes, 1,500 of records
    {"variant": "v", "role": "consumer", "node": "consumer-c", "broker": "1",
     "catching": False, "up": 200, "down": 2000, "records": 1500},
]
WIRE = [
    {"variant": "v", "src": "producer-p", "dst": "1", "kind": "produce", "bytes": 4100},
    {"variant": "v", "src": "1", "dst": "producer-p", "kind": "produce", "bytes": 70},
    {"variant": "v", "src": "0", "dst": "zk", "kind": "control", "bytes": 640},
    {"variant": "v", "src": "0", "dst": "1", "kind": "control", "bytes": 360},
]


def test_a_hand_counted_ledger() -> None:
    lines = ledger(FETCHES, WIRE)
    assert lines == {
        ("v", "fetch_overhead", "1", "0"): 1000 + 50,
        ("v", "replication", "0", "1"): 4000,
        ("v", "fetch_overhead", "0", "1"): 1000 + 100,
        ("v", "catch_up", "0", "1"): 300,
        ("v", "fetch_overhead", "consumer-c", "1"): 200,
        ("v", "consumer_fetch", "1", "consumer-c"): 1500,
        ("v", "fetch_overhead", "1", "consumer-c"): 500,
        ("v", "produce", "producer-p", "1"): 4100,
        ("v", "produce", "1", "producer-p"): 70,
        ("v", "control", "0", "zk"): 640,
        ("v", "control", "0", "1"): 360,
    }
    month_ms = 30 * 24 * 3600 * 1000
    aws = price(lines, ZONES, BROKERS, {"v": PROFILES["aws"]}, {"v": month_ms / 1000})["v"]
    traffic = aws["traffic"]
    assert traffic["replication"] == {"same_zone_bytes": 0, "cross_zone_bytes": 4000}
    assert traffic["catch_up"] == {"same_zone_bytes": 0, "cross_zone_bytes": 300}
    assert traffic["consumer_fetch"] == {"same_zone_bytes": 1500, "cross_zone_bytes": 0}
    assert traffic["fetch_overhead"] == {"same_zone_bytes": 700, "cross_zone_bytes": 2150}
    assert traffic["produce"] == {"same_zone_bytes": 0, "cross_zone_bytes": 4170}
    assert traffic["control"] == {"same_zone_bytes": 640, "cross_zone_bytes": 360}
    cross = 4000 + 300 + 2150 + 4170 + 360
    assert aws["cost"]["usd_total"] == pytest.approx(cross / 1e9 * 0.02, abs=1e-12)
    assert aws["cost"]["by_class"]["produce"] == pytest.approx(4170 / 1e9 * 0.02, abs=1e-12)
    assert aws["cost"]["usd_per_month"] == pytest.approx(cross / 1e9 * 0.02 * 1000, rel=1e-6)
    # MSK: what goes between the two brokers is free; the producer's bytes are billed.
    msk = price(lines, ZONES, BROKERS, {"v": PROFILES["msk"]}, {"v": None})["v"]
    assert msk["cost"]["usd_total"] == pytest.approx(4170 / 1e9 * 0.02, abs=1e-12)
    assert msk["cost"]["usd_per_month"] is None  # no span known
    assert set(msk["cost"]["by_class"]) == set(CLASSES)
    # GCP bills the sender only.
    gcp = price(lines, ZONES, BROKERS, {"v": PROFILES["gcp"]}, {"v": None})["v"]
    assert gcp["cost"]["usd_total"] == pytest.approx(cross / 1e9 * 0.01, abs=1e-12)


def test_out_of_isr_spans_merge_partitions_and_stay_open_at_the_end() -> None:
    shrink = {"event": "isr.shrink", "variant": "v", "added": None}
    expand = {"event": "isr.expand", "variant": "v", "removed": None}
    spans = out_of_isr([
        {**shrink, "t_ms": 10.0, "topic": "t", "partition": 0, "removed": [2]},
        {**shrink, "t_ms": 12.0, "topic": "t", "partition": 1, "removed": [2, 1]},
        {**expand, "t_ms": 20.0, "topic": "t", "partition": 0, "added": [2]},
        {**expand, "t_ms": 25.0, "topic": "t", "partition": 1, "added": [2]},
    ])
    assert spans == {("v", 2): [(10.0, 25.0)], ("v", 1): [(12.0, float("inf"))]}


def test_prices_resolve_from_the_profile_then_the_scenario_then_the_override() -> None:
    assert resolve(None) == PROFILES["aws"]
    assert resolve({"profile": "azure", "in_usd_per_gb": 0.0}).in_usd_per_gb == 0.0
    assert resolve({"profile": "azure", "in_usd_per_gb": 0.0}, "azure").in_usd_per_gb == 0.0
    assert resolve({"profile": "azure", "in_usd_per_gb": 0.0}, "msk") == PROFILES["msk"]


# -- the uniform 3-zone case, simulated and analysed on Spark ---------------------------------

def _run(tmp_path: Path, variants: tuple[str, ...]) -> dict[str, Any]:
    """The shipped cross-az-cost scenario, 10 s, the given variants, through the traffic stage."""
    scenario = load_scenario(ROOT / "scenarios" / "cross-az-cost.yaml", sets=["duration=10s"])
    chosen = [v for v in scenario.variants if v.name in variants]
    rundir.write_run(tmp_path, {"variants": {v.name: {
        "duration_ms": v.duration_ms, "cost": resolve(v.document.get("cost")).as_json()}
        for v in chosen}})
    for variant in chosen:
        simulate(variant, rundir.event_log(tmp_path, variant.name), scenario=scenario.name)
    return analyze_traffic(tmp_path)["variants"]


@pytest.mark.spark
def test_the_uniform_three_zone_case_lands_on_the_closed_form(tmp_path: Path) -> None:
    """Per byte produced: 2/3 of it crosses a zone to reach the leader, 2 bytes to replicate it,
    2/3 to consume it from the leader, 0 from a same-zone follower (within 0.5 %)."""
    out = _run(tmp_path, ("leader", "follower"))
    leader, follower = out["leader"]["traffic"], out["follower"]["traffic"]
    for traffic in (leader, follower):
        produce = traffic["produce"]
        assert produce["cross_zone_bytes"] / (
            produce["cross_zone_bytes"] + produce["same_zone_bytes"]) == pytest.approx(
                2 / 3, rel=0.005)
        consumed = sum(traffic["consumer_fetch"].values())  # each record is read once
        assert traffic["replication"]["same_zone_bytes"] == 0
        assert traffic["replication"]["cross_zone_bytes"] / consumed == pytest.approx(
            2, rel=0.005)
        assert traffic["catch_up"] == {"same_zone_bytes": 0, "cross_zone_bytes": 0}
    assert leader["consumer_fetch"]["cross_zone_bytes"] / sum(
        leader["consumer_fetch"].values()) == pytest.approx(2 / 3, rel=0.005)
    assert follower["consumer_fetch"]["cross_zone_bytes"] == 0
    assert follower["consumer_fetch"]["same_zone_bytes"] > 0
    cost = out["leader"]["cost"]
    assert cost["usd_total"] == pytest.approx(sum(cost["by_class"].values()), rel=1e-9)
    assert cost["usd_per_month"] > cost["usd_total"] > 0
    assert (out["follower"]["cost"]["by_class"]["consumer_fetch"] == 0
            < cost["by_class"]["consumer_fetch"])
    table = rundir.read_metric(tmp_path, rundir.TRAFFIC)
    assert {row["class"] for row in table} >= {"produce", "replication", "consumer_fetch",
                                               "fetch_overhead", "control"}


def test_price_profile_overrides_every_variants_cost_in_run_json() -> None:
    from rig.pipeline import RunOptions, _run_json

    scenario = load_scenario(ROOT / "scenarios" / "cross-az-cost.yaml")
    as_written = _run_json(scenario, RunOptions())["variants"]
    assert {v: info["cost"]["profile"] for v, info in as_written.items()} == {
        "leader": "aws", "follower": "aws", "msk": "msk"}
    assert as_written["msk"]["cost"]["broker_to_broker_free"] is True
    overridden = _run_json(scenario, RunOptions(price_profile="gcp"))["variants"]
    assert {info["cost"]["profile"] for info in overridden.values()} == {"gcp"}
    assert {info["cost"]["in_usd_per_gb"] for info in overridden.values()} == {0.0}
