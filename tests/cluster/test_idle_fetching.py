"""An idle cluster: what followers send and receive, round after round, per fetch version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from rig.scenario.load import load_scenario
from rig.simulate import simulate
from tests.conftest import ROOT

SEED = ROOT / "scenarios" / "fetch-sessions-1000-partitions.yaml"


def events(path: Path, name: str) -> list[dict[str, Any]]:
    return [e for e in map(orjson.loads, path.read_bytes().splitlines()) if e["event"] == name]


@pytest.fixture(scope="module")
def seed_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("seed")
    scenario = load_scenario(SEED, sets=["duration=30s"])
    paths = {}
    for variant in scenario.variants:
        paths[variant.name] = out / f"{variant.name}.jsonl"
        simulate(variant, paths[variant.name], scenario=scenario.name)
    return paths


def test_each_broker_follows_500_partitions_with_one_fetcher(seed_run: dict[str, Path]) -> None:
    starts = events(seed_run["v6"], "fetcher.start")
    assert sorted((e["broker"], e["leader"], e["partitions"]) for e in starts) == [
        (0, 1, 500), (1, 0, 500)]
    assert {e["client"] for e in starts} == {"broker-0-fetcher-0", "broker-1-fetcher-0"}


def test_v6_requests_are_always_12031_bytes(seed_run: dict[str, Path]) -> None:
    requests = events(seed_run["v6"], "fetch.request")
    assert {e["body_bytes"] for e in requests} == {12031}
    assert {e["partitions"] for e in requests} == {500}
    assert {e["header_bytes"] for e in requests} == {2 + 2 + 4 + 2 + len("broker-1-fetcher-0")}
    assert all(e["wire_bytes"] == 4 + e["header_bytes"] + e["body_bytes"] for e in requests)
    responses = events(seed_run["v6"], "fetch.response")
    assert {e["body_bytes"] for e in responses} == {4 + 4 + 2 + 4 + 4 + 500 * 38}


def test_v7_sends_one_full_fetch_then_33_byte_incremental_ones(seed_run: dict[str, Path]) -> None:
    for client in ("broker-0-fetcher-0", "broker-1-fetcher-0"):
        requests = [e for e in events(seed_run["v7"], "fetch.request") if e["client"] == client]
        first, rest = requests[0], requests[1:]
        assert (first["body_bytes"], first["full"], first["session_id"],
                first["session_epoch"]) == (12043, True, 0, 0)
        assert {e["body_bytes"] for e in rest} == {33}
        assert [e["session_epoch"] for e in rest] == list(range(1, len(rest) + 1))
        assert len({e["session_id"] for e in rest}) == 1 and rest[0]["session_id"] != 0
    created = events(seed_run["v7"], "session.created")
    assert len(created) == 2 and all(e["partitions"] == 500 for e in created)
    responses = events(seed_run["v7"], "fetch.response")
    sizes = sorted({e["body_bytes"] for e in responses})
    assert sizes == [4 + 2 + 4 + 4, 4 + 2 + 4 + 4 + 6 + 4 + 500 * 38]


def test_idle_fetches_long_poll_for_the_full_wait(seed_run: dict[str, Path]) -> None:
    responses = events(seed_run["v6"], "fetch.response")
    assert {e["waited_ms"] for e in responses} == {500.0}
    # One round trip: 500 ms of wait plus latency and serialization both ways (~1 ms here).
    per_fetcher = len(events(seed_run["v6"], "fetch.request")) / 2
    assert 59 <= per_fetcher <= 60


def test_every_event_has_the_common_fields_in_order(seed_run: dict[str, Path]) -> None:
    lines = seed_run["v7"].read_bytes().splitlines()
    seqs = []
    for line in lines:
        event = orjson.loads(line)
        assert list(event)[:4] == ["t_ms", "seq", "event", "variant"]
        seqs.append(event["seq"])
    assert seqs == list(range(1, len(lines) + 1))
