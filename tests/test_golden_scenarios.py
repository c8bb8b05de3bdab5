"""Every shipped scenario runs end to end (simulation, Spark, report) and meets its expectations."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from rig.cli import app
from tests.conftest import ROOT

SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml"))


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("stem", [p.stem for p in SCENARIOS])
def test_shipped_scenario_meets_its_expectations(stem: str, shipped_results: Any) -> None:
    run = shipped_results[stem]
    assert run.exit_code == 0, run.output
    summary = orjson.loads((run.run_dir / "summary.json").read_bytes())
    assert summary["expectations"] and all(e["ok"] is True for e in summary["expectations"])
    # Checks pass, or the scenario's own expectations say they must fail (KIP-101's variants).
    for name, variant in summary["variants"].items():
        checks = variant["checks"]
        assert checks["ok"] is True or checks["expected_by_scenario"], (name, checks)
    assert (run.run_dir / "report.html").stat().st_size > 0


@pytest.mark.spark
@pytest.mark.slow
def test_the_seed_experiment_numbers(shipped_results: Any) -> None:
    # The shipped run of the seed scenario is this experiment: read it rather than run it again.
    run = shipped_results["fetch-sessions-1000-partitions"]
    assert run.exit_code == 0, run.output
    summary = orjson.loads((run.run_dir / "summary.json").read_bytes())
    v6 = summary["variants"]["v6"]["fetch"]["follower"]
    v7 = summary["variants"]["v7"]["fetch"]["follower"]
    assert v6["request_bytes"]["min"] == v6["request_bytes"]["max"] == 12031
    assert (v7["first_request_bytes"], v7["request_bytes"]["max"],
            v7["request_bytes"]["p50"]) == (12043, 12043, 33)
    assert v6["requests"] == v7["requests"]  # the same long-poll rhythm
    assert v7["full_requests"] == 2  # one per follower, then incremental for ten minutes
    assert summary["variants"]["v6"]["fetch"]["consumer"]["requests"] == 0


@pytest.mark.spark
@pytest.mark.slow
def test_a_failed_expectation_exits_1_with_a_table(tmp_path: Path) -> None:
    scenario = ROOT / "scenarios" / "fetch-sessions-1000-partitions.yaml"
    result = CliRunner().invoke(app, [
        "run", str(scenario), "--out", str(tmp_path / "x"), "--no-report", "--variant", "v6",
        "--variant", "v7", "--set", "topics.0.partitions=999"])
    assert result.exit_code == 1
    assert "FAIL    variants.v6.fetch.follower.request_bytes.min == 12031   (measured 12007)" in (
        result.output)
    # A failed expectation still keeps the run; --no-report leaves the report out.
    assert (tmp_path / "x" / "summary.json").is_file()
    assert not (tmp_path / "x" / "report.html").exists()


ISR_KEYS = ("shrinks", "expands", "shrink_delay_ms", "propagation_delay_ms",
            "max_metadata_staleness_ms")


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("stem", [p.stem for p in SCENARIOS])
def test_every_scenario_reports_its_isr_numbers(stem: str, shipped_results: Any) -> None:
    summary = orjson.loads((shipped_results[stem].run_dir / "summary.json").read_bytes())
    for name, variant in summary["variants"].items():
        isr = variant["isr"]
        assert set(ISR_KEYS) <= set(isr), (name, isr)
        assert isr["shrinks"] == variant["replication"]["isr_shrinks"], name
        assert isr["expands"] == variant["replication"]["isr_expands"], name
        for key in ("shrink_delay_ms", "propagation_delay_ms"):
            spread = isr[key]
            assert spread is None or (set(spread) == {"min", "p50", "max"}
                                      and spread["min"] <= spread["p50"] <= spread["max"])


@pytest.mark.spark
@pytest.mark.slow
def test_the_dedupe_buffer_decides_the_passes(shipped_results: Any) -> None:
    run = shipped_results["compaction-dedupe-buffer"]
    summary = orjson.loads((run.run_dir / "summary.json").read_bytes())
    storage = {name: v["storage"] for name, v in summary["variants"].items()}
    assert storage["default-128MiB-1-thread"]["cleaner_passes"] == 1
    assert storage["1GiB-5-threads"]["cleaner_passes"] == 1
    tiny = storage["tiny-1536KiB"]
    assert tiny["cleaner_passes"] == tiny["partial_passes"] >= 3
    assert tiny["max_keys_mapped"] == int((1536 << 10) // 24 * 0.9)
    # Same records, same keys: the big buffers clean to the same size, the tiny one leaves more.
    assert (storage["default-128MiB-1-thread"]["final_compacted_log_bytes"]
            == storage["1GiB-5-threads"]["final_compacted_log_bytes"]
            < tiny["final_compacted_log_bytes"])
    passes = orjson.loads((run.run_dir / "metrics" / "storage.json").read_bytes())
    tiny_passes = passes["tiny-1536KiB"]["passes"]
    # Each partial pass continues where the previous one stopped.
    for before, after in itertools.pairwise(tiny_passes):
        assert after["first_dirty_offset"] == before["end_offset"]


@pytest.mark.spark
@pytest.mark.slow
def test_isr_scenarios_tell_the_strategies_apart(shipped_results: Any) -> None:
    def isr(stem: str, variant: str) -> dict[str, Any]:
        summary = orjson.loads((shipped_results[stem].run_dir / "summary.json").read_bytes())
        return summary["variants"][variant]["isr"]

    flapping = isr("isr-flapping-high-throughput", "lag-messages")
    assert flapping["shrinks"] == flapping["expands"] >= 3  # out and back in, each time
    assert isr("isr-flapping-high-throughput", "lag-time")["max_metadata_staleness_ms"] == 0
    assert isr("isr-stale-follower-low-throughput", "lag-messages")["notifications"] == 0
    stale = isr("isr-stale-follower-low-throughput", "lag-time")
    # A lone change, 60 s after the last announcement: it goes out at the next 2.5 s tick.
    assert 0 < stale["propagation_delay_ms"]["max"] <= 2600
    crash = shipped_results["isr-follower-crash-timing"].run_dir
    delays = orjson.loads((crash / "metrics" / "isr_propagation.json").read_bytes())
    shrink_news = {(r["variant"], r["broker"], r["partition"]) for r in delays
                   if r["written_ms"] < 30_000}
    # Both partitions' new ISR reached both live brokers (broker 2 was down) in both variants.
    assert shrink_news == {(v, b, p) for v in ("leader-shrinks", "controller-shrinks")
                           for b in (0, 1) for p in (0, 1)}


@pytest.mark.spark
@pytest.mark.slow
def test_offsets_fail_over_with_their_coordinator(shipped_results: Any) -> None:
    run = shipped_results["consumer-offsets-coordinator-failover"]
    summary = orjson.loads((run.run_dir / "summary.json").read_bytes())
    offsets = summary["variants"]["default"]["offsets"]
    assert offsets["coordinator_failovers"] == 6 and offsets["duplicates"] > 0
    assert {g: (info["offsets_partition"], info["coordinators"])
            for g, info in offsets["groups"].items()} == {
        "analytics": (10, [0, 2]), "fraud": (10, [0, 2]), "inventory": (10, [0, 2])}
