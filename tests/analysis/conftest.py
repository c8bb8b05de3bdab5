"""Fixtures for the Spark analysis tests: one shared SparkSession and a synthetic run dir.

The run mimics the seed measurement on two brokers that follow each other: v6 sends a 12031-byte
sessionless fetch every 500 ms; v7 sends one 12043-byte full fetch per fetcher, then 33-byte
incremental ones, and also has a consumer. Other events (with odd fields) must be ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

DURATION_MS = 10_000
ROUND_MS = 500


def _fetch_pair(
    variant: str,
    broker: int,
    t_ms: float,
    *,
    role: str = "follower",
    source: int | str,
    version: int,
    body: int,
    full: bool,
    response_body: int,
    session_id: int = 0,
    epoch: int = -1,
) -> list[dict[str, Any]]:
    """A request at t_ms and its response 400 ms later (seq is filled in by the caller)."""
    client = f"broker-{source}-fetcher-0" if role == "follower" else str(source)
    ids = {
        "variant": variant,
        "role": role,
        "client": client,
        "replica_id": source if role == "follower" else -1,
        "broker": broker,
        "source": source,
        "fetcher": 0,
        "version": version,
    }
    request = {
        "t_ms": t_ms,
        "event": "fetch.request",
        **ids,
        "session_id": session_id,
        "session_epoch": epoch,
        "full": full,
        "partitions": 500 if full else 0,
        "forgotten": 0,
        "body_bytes": body,
        "header_bytes": 31,
        "wire_bytes": 4 + 31 + body,
    }
    response = {
        "t_ms": t_ms + 400,
        "event": "fetch.response",
        **ids,
        "session_id": session_id,
        "error_code": 0,
        "partitions": 0,
        "records_bytes": 0,
        "waited_ms": 400.0,
        "body_bytes": response_body,
        "header_bytes": 8,
        "wire_bytes": 4 + 8 + response_body,
    }
    return [request, response]


def build_events() -> dict[str, list[dict[str, Any]]]:
    """Events per variant, in seq order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for variant, version in (("v6", 6), ("v7", 7)):
        events: list[dict[str, Any]] = [
            {
                "t_ms": 0.0,
                "event": "run.start",
                "variant": variant,
                "scenario": "idle",
                "seed": 1,
                "duration_ms": DURATION_MS,
                "fetch_version": version,
                "strategies": {"fetch_session": "incremental" if version >= 7 else "sessionless"},
            },
            {"t_ms": 0.0, "event": "broker.start", "variant": variant, "broker": 0, "rack": None},
            {
                "t_ms": 0.0,
                "event": "partition.assigned",
                "variant": variant,
                "topic": "test",
                "partition": 0,
                "replicas": [0, 1],
                "leader": 0,
                "extra": {"nested": [1, 2]},
            },
        ]
        pairs: list[dict[str, Any]] = []
        for round_no in range(DURATION_MS // ROUND_MS):
            for broker, source in ((0, 1), (1, 0)):
                t = float(round_no * ROUND_MS + 100 + broker)
                if version == 6:
                    # Alternate response sizes so the median of an even count is tested.
                    resp = 19_000 if round_no % 2 == 0 else 25_000
                    pairs += _fetch_pair(
                        variant,
                        broker,
                        t,
                        source=source,
                        version=6,
                        body=12_031,
                        full=True,
                        response_body=resp,
                    )
                else:
                    first = round_no == 0
                    pairs += _fetch_pair(
                        variant,
                        broker,
                        t,
                        source=source,
                        version=7,
                        body=12_043 if first else 33,
                        full=first,
                        response_body=19_010 if first else 14,
                        session_id=100 + broker,
                        epoch=0 if first else round_no,
                    )
        if version == 7:
            # A consumer with two fetches of different sizes: median of an even count again.
            pairs += _fetch_pair(
                variant,
                0,
                2_050.0,
                role="consumer",
                source="consumer-a",
                version=7,
                body=200,
                full=True,
                response_body=500,
            )
            pairs += _fetch_pair(
                variant,
                0,
                3_050.0,
                role="consumer",
                source="consumer-a",
                version=7,
                body=100,
                full=False,
                response_body=300,
            )
        if version == 7:
            # Two follower responses refused partitions (fetch.response's `errors`).
            responses = [e for e in pairs if e["event"] == "fetch.response"
                         and e["role"] == "follower"]
            responses[0]["errors"] = [["test", 0, 75], ["test", 1, 75]]
            responses[1]["errors"] = [["test", 0, 6]]
        pairs.sort(key=lambda e: (e["t_ms"], e["event"]))
        events += pairs
        events.append({"t_ms": float(DURATION_MS), "event": "run.end", "variant": variant})
        for seq, event in enumerate(events):
            event["seq"] = seq
        out[variant] = events
    return out


def simulated_run(root: Path, scenario_text: str) -> tuple[Path, list[dict[str, Any]]]:
    """Simulate the one-variant scenario `scenario_text` into a run directory at `root` (its
    event log as events/default.jsonl and a run.json the stages read); the events as dicts."""
    import textwrap

    from rig.scenario.load import load_scenario
    from rig.simulate import simulate

    root.mkdir(parents=True, exist_ok=True)
    scenario = root / "scenario.yaml"
    scenario.write_text(textwrap.dedent(scenario_text).lstrip(), encoding="utf-8")
    variant = load_scenario(scenario).variants[0]
    simulate(variant, root / "events" / "default.jsonl")
    (root / "run.json").write_bytes(orjson.dumps(
        {"variants": {"default": {"duration_ms": variant.duration_ms}}}))
    return root, [orjson.loads(line)
                  for line in (root / "events" / "default.jsonl").read_bytes().splitlines()]


def write_run(root: Path) -> Path:
    """Write run.json and events/<variant>.jsonl under root; return root."""
    (root / "events").mkdir(parents=True, exist_ok=True)
    events = build_events()
    for variant, rows in events.items():
        with (root / "events" / f"{variant}.jsonl").open("wb") as out:
            for row in rows:
                # Field order as a logger would write it: t_ms, seq, event first.
                head = {"t_ms": row["t_ms"], "seq": row["seq"], "event": row["event"]}
                out.write(orjson.dumps({**head, **row}) + b"\n")
    run = {
        "scenario": "idle",
        "description": "synthetic",
        "seed": 1,
        "rig_version": "0.1.0",
        "scenario_sha256": "0" * 64,
        "command": "rig run idle.yaml --seed 1",
        "variants": {
            "v6": {
                "duration_ms": DURATION_MS,
                "fetch_version": 6,
                "strategies": {"fetch_session": "sessionless"},
            },
            "v7": {
                "duration_ms": DURATION_MS,
                "fetch_version": 7,
                "strategies": {"fetch_session": "incremental"},
            },
        },
    }
    (root / "run.json").write_bytes(orjson.dumps(run))
    return root


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The process-wide session analyze_run reuses; started once: start-up costs seconds."""
    from rig.analysis.spark import get_spark, stop_spark

    session = get_spark()
    yield session
    stop_spark()


@pytest.fixture(scope="session")
def synthetic_events() -> dict[str, list[dict[str, Any]]]:
    return build_events()


@pytest.fixture(scope="session")
def analysed(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """(run dir, analyze_run result) for the synthetic run, computed once."""
    from rig.analysis import analyze_run

    run_dir = write_run(tmp_path_factory.mktemp("run"))
    return run_dir, analyze_run(run_dir)


@pytest.fixture
def write_synthetic_run() -> Any:
    return write_run
