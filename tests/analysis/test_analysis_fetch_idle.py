"""`events: full` and `events: fetch-aggregated` give the same analysis: one synthetic run
written twice, its idle fetch rounds once as fetch.request + fetch.response events and once as
fetch.idle events (rig/events/names.py), then every analysis stage run on both.

The runs cover what the closed form must get right: rounds crossing second boundaries and
falling exactly on them, periods that do not divide a second or exceed it, counts 0 and 1, one
request more than responses (and the reverse, when a run is split in two), v6 sessionless and
v7 incremental sizes, plain fetches between idle runs, and a fault whose catch-up window starts
and ends exactly on idle responses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest

pytestmark = pytest.mark.spark

DURATION_MS = 20_000
REQUEST_HEADER, RESPONSE_HEADER = 31, 8


@dataclass(frozen=True)
class Client:
    """The ids a fetch client puts on every fetch event."""

    role: str
    source: int | str
    broker: int
    version: int
    session_id: int = 0

    def ids(self) -> dict[str, Any]:
        follower = self.role == "follower"
        return {"role": self.role,
                "client": f"broker-{self.source}-fetcher-0" if follower else str(self.source),
                "replica_id": self.source if follower else -1, "broker": self.broker,
                "source": self.source, "fetcher": 0, "version": self.version,
                "session_id": self.session_id}


@dataclass(frozen=True)
class IdleRun:
    """One fetch.idle: `requests` at first_request_us + i·period_us, `responses` at
    first_response_us + i·period_us."""

    client: Client
    period_us: int
    requests: int
    first_request_us: int
    responses: int
    first_response_us: int
    request: tuple[int, int]  # (partitions, body bytes)
    response: tuple[int, int]
    full: bool
    first_session_epoch: int = -1
    waited_ms: float = 500.0


def _at(t_us: int, event: str, **fields: Any) -> dict[str, Any]:
    return {"_us": t_us, "event": event, **fields}


def _request(client: Client, t_us: int, partitions: int, body: int, *, full: bool,
             epoch: int) -> dict[str, Any]:
    return _at(t_us, "fetch.request", **client.ids(), session_epoch=epoch, full=full,
               partitions=partitions, forgotten=0, body_bytes=body, header_bytes=REQUEST_HEADER,
               wire_bytes=4 + REQUEST_HEADER + body)


def _response(client: Client, t_us: int, partitions: int, body: int, *, waited_ms: float,
              records_bytes: int = 0, session_id: int | None = None) -> dict[str, Any]:
    ids = client.ids()
    if session_id is not None:
        ids["session_id"] = session_id
    return _at(t_us, "fetch.response", **ids, error_code=0, partitions=partitions,
               records_bytes=records_bytes, waited_ms=waited_ms, body_bytes=body,
               header_bytes=RESPONSE_HEADER, wire_bytes=4 + RESPONSE_HEADER + body)


def _rounds(run: IdleRun) -> list[dict[str, Any]]:
    """The run as the full log has it: one event per request and per response."""
    epoch = run.first_session_epoch
    requests = [_request(run.client, run.first_request_us + i * run.period_us, *run.request,
                         full=run.full, epoch=epoch if epoch == -1 else epoch + i)
                for i in range(run.requests)]
    responses = [_response(run.client, run.first_response_us + i * run.period_us,
                           *run.response, waited_ms=run.waited_ms)
                 for i in range(run.responses)]
    return requests + responses


def _idle(run: IdleRun) -> dict[str, Any]:
    """The run as the aggregated log has it: one fetch.idle, logged when the run ended."""
    last = [first + (count - 1) * run.period_us for first, count in (
        (run.first_request_us, run.requests), (run.first_response_us, run.responses)) if count]
    (req_partitions, req_body), (resp_partitions, resp_body) = run.request, run.response
    return _at(max(last), "fetch.idle", **run.client.ids(), full=run.full,
               first_session_epoch=run.first_session_epoch, period_us=run.period_us,
               requests=run.requests, first_request_us=run.first_request_us,
               request_partitions=req_partitions, request_body_bytes=req_body,
               request_header_bytes=REQUEST_HEADER,
               request_wire_bytes=4 + REQUEST_HEADER + req_body,
               responses=run.responses, first_response_us=run.first_response_us,
               response_partitions=resp_partitions, error_code=0, records_bytes=0,
               waited_ms=run.waited_ms, response_body_bytes=resp_body,
               response_header_bytes=RESPONSE_HEADER,
               response_wire_bytes=4 + RESPONSE_HEADER + resp_body)


def _v6() -> tuple[list[dict[str, Any]], list[IdleRun]]:
    """Sessionless followers and a consumer: every request lists every partition."""
    one, two = Client("follower", 1, 0, 6), Client("follower", 2, 0, 6)
    zero, consumer = Client("follower", 0, 1, 6), Client("consumer", "c1", 1, 6)
    full_request, full_response = (500, 12_031), (500, 19_000)
    runs = [
        # A run split in two: the first ends on a request whose response opens the second.
        IdleRun(one, 500_000, 25, 100_000, 24, 600_000, full_request, full_response, True),
        IdleRun(one, 500_000, 10, 12_600_000, 11, 12_600_000, full_request, full_response,
                True),
        IdleRun(one, 500_000, 5, 17_650_000, 4, 18_150_000, full_request, full_response, True),
        # 501 ms rounds from the last µs of second 0; responses 1 µs later.
        IdleRun(two, 501_000, 38, 999_999, 38, 1_000_000, full_request, full_response, True,
                waited_ms=0.001),
        # Rounds 1.5 s apart skip seconds; the first request exactly at 2 s.
        IdleRun(consumer, 1_500_000, 7, 2_000_000, 7, 2_500_000, (10, 400), (10, 300), True),
        # No request, one response; then one request that is never answered.
        IdleRun(zero, 500_000, 0, 650_000, 1, 1_150_000, (300, 9_000), (300, 14_000), True),
        IdleRun(zero, 777_000, 1, 19_999_999, 0, 0, (300, 9_000), (300, 14_000), True),
    ]
    plain = [
        # Broker 0's first request is plain and comes after follower 1's first idle round:
        # the aggregated log writes that round last, but it is still the first request.
        _request(zero, 150_000, 300, 9_000, full=True, epoch=-1),
        _response(zero, 650_000, 300, 14_000, waited_ms=500.0),
        _request(zero, 650_000, 300, 9_000, full=True, epoch=-1),
        # A round with records between two idle runs of follower 1.
        _request(one, 17_600_000, *full_request, full=True, epoch=-1),
        _response(one, 17_650_000, 500, 22_031, waited_ms=50.0, records_bytes=3_000),
    ]
    return plain, runs


def _v7() -> tuple[list[dict[str, Any]], list[IdleRun]]:
    """Incremental followers, a consumer that got no session slot, and broker 2 crashing."""
    one = Client("follower", 1, 0, 7, session_id=101)
    two = Client("follower", 2, 0, 7, session_id=202)
    consumer = Client("consumer", "c2", 0, 7)  # no slot: full fetches (0, 0), session 0
    incremental, empty = (0, 33), (0, 14)
    runs = [
        IdleRun(one, 500_000, 39, 60_000, 39, 560_000, incremental, empty, False, 1),
        IdleRun(consumer, 1_666_667, 12, 333_333, 12, 833_333, (20, 700), (20, 240), True, 0),
        # Broker 2's responses: one exactly at the heal (5 s), ...
        IdleRun(two, 501_000, 6, 3_998_000, 6, 4_499_000, incremental, empty, False, 3),
        # ... and one exactly when its ISR is full again (7250.5 ms).
        IdleRun(two, 501_000, 3, 7_100_000, 3, 7_250_500, incremental, empty, False, 10,
                waited_ms=150.5),
    ]
    plain = [
        _at(0, "partition.assigned", topic="t", partition=0, replicas=[0, 1, 2], leader=0),
        _request(Client("follower", 1, 0, 7), 50_000, 500, 12_043, full=True, epoch=0),
        _at(60_000, "session.created", broker=0, client="broker-1-fetcher-0", session_id=101,
            partitions=500, privileged=True),
        _response(one, 60_000, 500, 19_010, waited_ms=10.0),
        _at(1_000_000, "session.cache", broker=0, sessions=2, partitions=1_000, slots=2),
        _at(3_000_000, "fault.inject", fault=0, kind="crash", targets=["2"]),
        _at(3_000_000, "broker.crash", broker=2),
        _at(3_500_000, "isr.shrink", topic="t", partition=0, isr=[0, 1], removed=[2]),
        _at(5_000_000, "fault.heal", fault=0, kind="crash", targets=["2"]),
        _at(5_000_000, "broker.restart", broker=2),
        # A round with records inside the catch-up window.
        _request(two, 7_004_000, 0, 33, full=False, epoch=9),
        _response(two, 7_100_000, 1, 4_200, waited_ms=96.0, records_bytes=4_096),
        _at(7_250_500, "isr.expand", topic="t", partition=0, isr=[0, 1, 2], added=[2]),
    ]
    return plain, runs


def _log(variant: str, plain: list[dict[str, Any]], runs: list[IdleRun],
         aggregated: bool) -> list[dict[str, Any]]:
    """The variant's log in time order, seq numbered, as rig writes it."""
    fetches = [_idle(run) for run in runs] if aggregated else [
        event for run in runs for event in _rounds(run)]
    start = _at(0, "run.start", duration_ms=DURATION_MS)
    end = _at(DURATION_MS * 1000, "run.end")
    # sorted() is stable: at one µs, plain events first, then the fetches in run order.
    timed = [*sorted([start, *plain, *fetches], key=lambda e: e["_us"]), end]
    return [{"t_ms": e["_us"] / 1000, "seq": seq, "event": e["event"], "variant": variant,
             **{k: v for k, v in e.items() if k not in ("_us", "event")}}
            for seq, e in enumerate(timed, start=1)]


def _write_run(root: Path, aggregated: bool) -> Path:
    (root / "events").mkdir(parents=True)
    for variant, (plain, runs) in (("v6", _v6()), ("v7", _v7())):
        lines = [orjson.dumps(e) for e in _log(variant, plain, runs, aggregated)]
        (root / "events" / f"{variant}.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (root / "run.json").write_bytes(orjson.dumps({"variants": {
        "v6": {"duration_ms": DURATION_MS, "fetch_version": 6},
        "v7": {"duration_ms": DURATION_MS, "fetch_version": 7}}}))
    return root


def _analyse(run_dir: Path) -> dict[str, Any]:
    """What `rig run` puts in summary.json's variants from the analysis: analyze_run, then
    every stage (rig.pipeline.summarise)."""
    from rig.analysis import analyze_run
    from rig.analysis.stages import run_stages

    variants = analyze_run(run_dir)["variants"]
    for name, extra in run_stages(run_dir).items():
        variants.setdefault(name, {}).update(extra)
    return variants


def _tables(run_dir: Path) -> dict[str, Any]:
    return {p.name: orjson.loads(p.read_bytes())
            for p in sorted((run_dir / "metrics").glob("*.json"))}


def _without_seq(value: Any) -> Any:
    """`value` minus every `seq`: the fault and partition-timeline rows name the events they
    come from by seq, and the aggregated log, being shorter, numbers its events differently."""
    if isinstance(value, dict):
        return {k: _without_seq(v) for k, v in value.items() if k != "seq"}
    if isinstance(value, list):
        return [_without_seq(v) for v in value]
    return value


@pytest.fixture(scope="module")
def runs(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict]]:
    """{"full" | "aggregated": (run dir, analysed variants)}."""
    out = {}
    for mode, aggregated in (("full", False), ("aggregated", True)):
        run_dir = _write_run(tmp_path_factory.mktemp(mode), aggregated)
        out[mode] = (run_dir, _analyse(run_dir))
    return out


def test_the_two_logs_differ_only_in_how_idle_rounds_are_written(runs: dict) -> None:
    full = (runs["full"][0] / "events" / "v6.jsonl").read_bytes()
    aggregated = (runs["aggregated"][0] / "events" / "v6.jsonl").read_bytes()
    assert b'"fetch.idle"' not in full and aggregated.count(b'"fetch.idle"') == 7
    assert len(aggregated.splitlines()) == len(full.splitlines()) - 171 + 7


def test_summary_entries_are_identical(runs: dict) -> None:
    full, aggregated = runs["full"][1], runs["aggregated"][1]
    assert aggregated == full
    # Not identical by being empty: the figures the full log gives, worked out by hand.
    v6, v7 = full["v6"], full["v7"]
    assert v6["fetch"]["follower"]["requests"] == 25 + 10 + 5 + 38 + 1 + 2 + 1
    assert v6["fetch"]["follower"]["first_request_bytes"] == 12_031
    assert v6["fetch"]["consumer"]["responses"] == 7
    assert v7["fetch"]["follower"]["incremental_requests"] == 39 + 6 + 3 + 1
    assert v6["sessions"]["sessionless_full_fetches"] == {"consumer": 7, "follower": 80}
    assert v7["sessions"]["sessionless_full_fetches"] == {"consumer": 12, "follower": 0}
    # From the heal at 5 s to the full ISR at 7250.5 ms, both ends included: idle responses
    # at 5000, 5501, 6002, 6503, 7004 and 7250.5 ms and the plain one with records.
    assert v7["replication"]["catch_up_bytes"] == 6 * (4 + 8 + 14) + (4 + 8 + 4_200)


def test_every_metric_table_is_identical(runs: dict) -> None:
    full, aggregated = _tables(runs["full"][0]), _tables(runs["aggregated"][0])
    assert sorted(aggregated) == sorted(full)
    for name, table in full.items():
        assert _without_seq(aggregated[name]) == _without_seq(table), name
    (fault,) = full["recovery.json"]
    assert (fault["catch_up_bytes"], fault["catch_up_record_bytes"]) == (4_368, 4_096)
    assert len(full["fetch_timeseries.json"]) > 50
