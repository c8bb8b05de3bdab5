"""Fetch codec benchmarks: encoder and fast-size-path throughput for every version, v4–v17.

Run: python benchmarks/protocol.py [--seconds S] [--versions 4-17]. Three messages: a follower's
500-partition full fetch, an incremental fetch with nothing changed (v7+), and a response with 50
partitions carrying 1 KiB of records each. Each figure is the best of three timed runs.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

from rig.protocol import (
    FETCH_VERSIONS,
    RequestShape,
    ResponsePartitionShape,
    ResponseShape,
    ResponseTopicShape,
    encode_fetch_request,
    encode_fetch_response,
    materialize_request,
    materialize_response,
    request_body_size,
    response_body_size,
)

RECORDS_BYTES = 1024


@dataclass(frozen=True)
class Case:
    title: str
    min_version: int
    encode: Callable[[int], Callable[[], int]]  # version → a call that encodes, returns len
    size: Callable[[int], Callable[[], int]]  # version → a call of the fast size path


def _request_case(title: str, topics: tuple[tuple[str, int], ...], min_version: int) -> Case:
    def encode(v: int) -> Callable[[], int]:
        message = materialize_request(RequestShape(v, topics))
        return lambda: len(encode_fetch_request(message, v))

    def size(v: int) -> Callable[[], int]:
        shape = RequestShape(v, topics)
        return lambda: request_body_size(shape)

    return Case(title, min_version, encode, size)


def _response_shape(v: int) -> ResponseShape:
    busy = tuple(ResponsePartitionShape(records=RECORDS_BYTES) for _ in range(50))
    return ResponseShape(v, (ResponseTopicShape("test", partitions=busy),))


def _response_case() -> Case:
    def encode(v: int) -> Callable[[], int]:
        message = materialize_response(_response_shape(v))
        return lambda: len(encode_fetch_response(message, v))

    def size(v: int) -> Callable[[], int]:
        shape = _response_shape(v)
        return lambda: response_body_size(shape)

    return Case(f"response, 50 partitions × {RECORDS_BYTES} B of records", FETCH_VERSIONS[0],
                encode, size)


CASES = [
    _request_case("follower request, full fetch of 500 partitions", (("test", 500),),
                  FETCH_VERSIONS[0]),
    _request_case("follower request, incremental, nothing changed", (), 7),
    _response_case(),
]


def rate(call: Callable[[], int], seconds: float) -> float:
    """Calls per second: best of three runs of about `seconds` / 3 each."""
    call()  # warm the per-version caches
    best = 0.0
    gc.disable()
    try:
        for _ in range(3):
            n, started, deadline = 0, time.perf_counter(), time.perf_counter() + seconds / 3
            while True:
                for _ in range(16):
                    call()
                n += 16
                now = time.perf_counter()
                if now >= deadline:
                    break
            best = max(best, n / (now - started))
    finally:
        gc.enable()
    return best


def _versions(text: str) -> list[int]:
    low, _, high = text.partition("-")
    chosen = list(range(int(low), int(high or low) + 1))
    if not chosen or any(v not in FETCH_VERSIONS for v in chosen):
        raise argparse.ArgumentTypeError(f"versions must lie within 4-17 (got {text})")
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=0.3,
                        help="time per measured figure (default 0.3)")
    parser.add_argument("--versions", type=_versions, default=list(FETCH_VERSIONS),
                        help="a version or a range, e.g. 7 or 4-17")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; "
          f"{args.seconds:g} s per figure, best of 3")
    mismatches = 0
    for case in CASES:
        print(f"\n{case.title}")
        print(f"  {'version':>7}  {'body bytes':>10}  {'encodes/s':>10}  {'encode MB/s':>11}  "
              f"{'sizes/s':>11}  {'size path speed-up':>18}")
        for v in args.versions:
            if v < case.min_version:
                print(f"  {'v' + str(v):>7}  {'—':>10}  (no sessions before v7)")
                continue
            encode, size = case.encode(v), case.size(v)
            body = encode()
            if size() != body:
                mismatches += 1
            encodes, sizes = rate(encode, args.seconds), rate(size, args.seconds)
            flag = "" if size() == body else f"   SIZE PATH SAYS {size()}"
            print(f"  {'v' + str(v):>7}  {body:>10,}  {encodes:>10,.0f}  "
                  f"{encodes * body / 1e6:>11,.1f}  {sizes:>11,.0f}  "
                  f"{sizes / encodes:>17,.0f}×{flag}")
    if mismatches:
        sys.exit(f"\n{mismatches} size path figures differ from the encoder")


if __name__ == "__main__":
    main()
