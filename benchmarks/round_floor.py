"""What an idle fetch round costs rig, against what it must cost in CPython at the least.

Run: python benchmarks/round_floor.py [--rounds N]

An idle follower fetch round (the seed scenario's whole hour) is four queue entries (the request's
arrival, its max wait in purgatory, the response's arrival, and the request's timeout, pushed
and cancelled), two event lines rendered and written, and a session epoch counted. The *floor*
is that work written as tightly as Python allows, with nothing else: no model, no strategies,
no checks. rig's *marginal* cost per round is measured on the seed scenario itself: the CPU of a
simulated hour less that of ten minutes, over the rounds the extra fifty minutes add (set-up
and start-up cancel out; what else those minutes do, the brokers' periodic tasks and ZooKeeper
heartbeats, counts against rig, as it does in the seed hour's events per CPU s). Issue 14's
100,000 events per CPU s on the seed hour is 20 µs a round of two events; the ratios printed say
how far rig's fetch path is from the floor and how close it must come.
"""

from __future__ import annotations

import argparse
import heapq
import io
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "scenarios" / "fetch-sessions-1000-partitions.yaml"
TARGET_EVENTS_PER_CPU_S = 100_000  # issue 14, the seed hour

_REQUEST = (b',"event":"fetch.request","variant":"v7","role":"follower","client":'
            b'"broker-1-fetcher-0","replica_id":1,"broker":0,"source":1,"fetcher":0,"version":7,')
_RESPONSE = (b',"event":"fetch.response","variant":"v7","role":"follower","client":'
             b'"broker-1-fetcher-0","replica_id":1,"broker":0,"source":1,"fetcher":0,"version":7,')


def floor_us(rounds: int) -> float:
    """CPU µs per idle round of the tightest loop that does a round's unavoidable work."""
    queue: list[tuple[int, int, int, object]] = []
    out = io.BytesIO()
    cancelled: set[int] = set()
    clock = {"now": 0, "inserted": 0, "seq": 0, "epoch": 0, "timeout": 0, "last_fetch": 0}

    def push(at_us: int, action: object) -> int:
        clock["inserted"] += 1
        heapq.heappush(queue, (at_us, clock["now"], clock["inserted"], action))
        return clock["inserted"]

    def emit(static: bytes, fields: dict[str, object]) -> None:
        clock["seq"] += 1
        out.write(b'{"t_ms":' + orjson.dumps(clock["now"] / 1000) + b',"seq":'
                  + str(clock["seq"]).encode() + static + orjson.dumps(fields)[1:] + b"\n")

    def send() -> None:
        clock["epoch"] += 1
        emit(_REQUEST, {"session_id": 5, "session_epoch": clock["epoch"], "full": False,
                        "partitions": 0, "forgotten": 0, "body_bytes": 33, "header_bytes": 28,
                        "wire_bytes": 65})
        clock["timeout"] = push(clock["now"] + 30_000_000, lambda: None)
        push(clock["now"] + 510, arrive)

    def arrive() -> None:
        clock["last_fetch"] = clock["now"]
        push(clock["now"] + 500_000, respond)

    def respond() -> None:
        emit(_RESPONSE, {"session_id": 5, "error_code": 0, "partitions": 0, "records_bytes": 0,
                         "waited_ms": 500.0, "body_bytes": 16, "header_bytes": 4,
                         "wire_bytes": 24})
        push(clock["now"] + 510, answered)

    def answered() -> None:
        cancelled.add(clock["timeout"])
        send()

    push(0, send)
    done = 0
    started = time.process_time()
    while done < rounds:
        at_us, _, inserted, action = heapq.heappop(queue)
        if inserted in cancelled:
            cancelled.discard(inserted)
            continue
        clock["now"] = at_us
        action()  # type: ignore[operator]
        done += action is answered
    return (time.process_time() - started) / rounds * 1e6


def rig_round_us(variant_name: str) -> float:
    """CPU µs per idle round on the seed scenario for one variant."""
    from rig.scenario.load import load_scenario
    from rig.simulate import simulate

    measured = []
    for duration in ("10m", "1h"):
        scenario = load_scenario(SEED, sets=[f"duration={duration}"])
        [variant] = [v for v in scenario.variants if v.name == variant_name]
        with tempfile.TemporaryDirectory() as tmp:
            started = time.process_time()
            result = simulate(variant, Path(tmp) / "events.jsonl", scenario=scenario.name)
            measured.append((time.process_time() - started, result.events))
    (cpu_short, events_short), (cpu_long, events_long) = measured
    rounds = (events_long - events_short) / 2  # a request and a response each
    return (cpu_long - cpu_short) / rounds * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200_000,
                        help="rounds of the floor's loop (default 200,000)")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}")
    floor = min(floor_us(args.rounds) for _ in range(3))
    print(f"  floor: {floor:6.1f} CPU µs per idle round "
          f"({2e6 / floor:,.0f} events per CPU s; best of 3 × {args.rounds:,} rounds)")
    target = 2e6 / TARGET_EVENTS_PER_CPU_S
    for name in ("v6", "v7"):
        cost = rig_round_us(name)
        print(f"  rig {name}: {cost:6.1f} CPU µs per idle round ({2e6 / cost:,.0f} events per "
              f"CPU s, marginal: 1 h less 10 min) = {cost / floor:4.1f}× the floor")
    print(f"  issue 14's {TARGET_EVENTS_PER_CPU_S:,} events per CPU s: {target:.1f} µs a round "
          f"= {target / floor:.1f}× the floor")


if __name__ == "__main__":
    main()
