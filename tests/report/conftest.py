"""A synthetic run directory for report tests: run.json, summary.json, metrics/, scenario.yaml.

Numbers follow the seed measurement (two brokers following each other, 500 partitions each, two
fetches per second per broker): v6 sends 12031-byte requests, v7 one 12043-byte full fetch per
broker and then 33-byte incremental ones. Written by hand, no Spark involved.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

HOSTILE = "Idle cluster <script>alert('pwned')</script> & friends"
COMMAND = "rig run scenarios/idle-fetch.yaml --seed 7 --out 'reports/idle fetch'"
DURATION_S = 300
SIZES = {"v6": (12_031, 12_031), "v7": (12_043, 33)}  # (first, steady) request body bytes
RESPONSE = {"v6": (19_008, 19_008), "v7": (19_020, 14)}


def _series(variant: str, consumers: bool) -> tuple[list[dict], list[dict], dict[str, Any]]:
    """Timeseries rows, size rows and the fetch summary of one variant."""
    first, steady = SIZES[variant]
    r_first, r_steady = RESPONSE[variant]
    rows, req_sizes, resp_sizes = [], [], []
    for broker in (0, 1):
        for second in range(DURATION_S):
            reqs = [first, steady] if second == 0 else [steady, steady]
            resps = [r_first, r_steady] if second == 0 else [r_steady, r_steady]
            req_sizes += reqs
            resp_sizes += resps
            rows.append(
                {
                    "variant": variant,
                    "role": "follower",
                    "broker": broker,
                    "second": second,
                    "requests": 2,
                    "responses": 2,
                    "request_bytes": sum(reqs),
                    "response_bytes": sum(resps),
                    "wire_request_bytes": sum(reqs) + 2 * 35,
                    "wire_response_bytes": sum(resps) + 2 * 12,
                }
            )
    sizes = []
    for kind, values in (("request", req_sizes), ("response", resp_sizes)):
        for size in sorted(set(values)):
            sizes.append(
                {
                    "variant": variant,
                    "role": "follower",
                    "kind": kind,
                    "body_bytes": size,
                    "count": values.count(size),
                }
            )

    def stats(values: list[int]) -> dict[str, int]:
        ordered = sorted(values)
        return {
            "total": sum(values),
            "min": ordered[0],
            "max": ordered[-1],
            "p50": ordered[(len(ordered) - 1) // 2],
        }

    follower = {
        "requests": len(req_sizes),
        "responses": len(resp_sizes),
        "full_requests": 2 if variant == "v7" else len(req_sizes),
        "incremental_requests": len(req_sizes) - 2 if variant == "v7" else 0,
        "request_bytes": stats(req_sizes),
        "response_bytes": stats(resp_sizes),
        "first_request_bytes": first,
        "request_bytes_per_second": sum(req_sizes) / DURATION_S,
        "response_bytes_per_second": sum(resp_sizes) / DURATION_S,
    }
    empty = {"total": 0, "min": None, "max": None, "p50": None}
    consumer: dict[str, Any] = {
        "requests": 0,
        "responses": 0,
        "full_requests": 0,
        "incremental_requests": 0,
        "request_bytes": empty,
        "response_bytes": empty,
        "first_request_bytes": None,
        "request_bytes_per_second": 0.0,
        "response_bytes_per_second": 0.0,
    }
    if consumers:
        c_sizes = [900 if s % 10 == 0 else 120 for s in range(DURATION_S)]
        for second, size in enumerate(c_sizes):
            rows.append(
                {
                    "variant": variant,
                    "role": "consumer",
                    "broker": 0,
                    "second": second,
                    "requests": 1,
                    "responses": 1,
                    "request_bytes": size,
                    "response_bytes": 4_000,
                    "wire_request_bytes": size + 40,
                    "wire_response_bytes": 4_012,
                }
            )
        for size in sorted(set(c_sizes)):
            sizes.append(
                {
                    "variant": variant,
                    "role": "consumer",
                    "kind": "request",
                    "body_bytes": size,
                    "count": c_sizes.count(size),
                }
            )
        sizes.append(
            {
                "variant": variant,
                "role": "consumer",
                "kind": "response",
                "body_bytes": 4_000,
                "count": DURATION_S,
            }
        )
        consumer = {
            **consumer,
            "requests": DURATION_S,
            "responses": DURATION_S,
            "full_requests": DURATION_S,
            "request_bytes": stats(c_sizes),
            "response_bytes": stats([4_000] * DURATION_S),
            "first_request_bytes": 900,
            "request_bytes_per_second": sum(c_sizes) / DURATION_S,
            "response_bytes_per_second": 4_000.0,
        }
    return rows, sizes, {"follower": follower, "consumer": consumer}


def write_report_run(root: Path, *, consumers: bool = False) -> Path:
    """Write a complete synthetic run directory under `root` and return it."""
    root.mkdir(parents=True, exist_ok=True)
    timeseries, sizes, variants = [], [], {}
    for variant in ("v6", "v7"):
        rows, size_rows, fetch = _series(variant, consumers)
        timeseries += rows
        sizes += size_rows
        variants[variant] = {"fetch": fetch}
    variants["v6"]["checks"] = {"ok": True, "violations": []}
    variants["v7"]["checks"] = {
        "ok": False,
        "violations": [{"message": "high watermark went backwards <b>", "broker": 1}],
    }
    run = {
        "scenario": "idle-fetch",
        "description": HOSTILE,
        "seed": 7,
        "rig_version": "0.1.0",
        "scenario_sha256": "ab" * 32,
        "command": COMMAND,
        "variants": {
            "v6": {
                "duration_ms": DURATION_S * 1000,
                "fetch_version": 6,
                "strategies": {"fetch_session": "sessionless", "placement": "kafka"},
            },
            "v7": {
                "duration_ms": DURATION_S * 1000,
                "fetch_version": 7,
                "strategies": {"fetch_session": "incremental", "placement": "kafka"},
            },
        },
    }
    summary = {
        "scenario": "idle-fetch",
        "seed": 7,
        "rig_version": "0.1.0",
        "variants": variants,
        "expectations": [
            {"expect": "v6 follower request p50 == 12031 bytes", "value": 12031, "ok": True},
            {"expect": "v7 steady request <= 40 bytes", "value": 33, "ok": True},
            {"expect": "v7 costs < 1% of v6", "value": 0.0526, "ok": False},
            {"expect": "max recovery < 30 s", "value": None, "ok": None},
        ],
    }
    (root / "metrics").mkdir(exist_ok=True)
    (root / "run.json").write_bytes(orjson.dumps(run))
    (root / "summary.json").write_bytes(orjson.dumps(summary))
    (root / "metrics" / "fetch_timeseries.json").write_bytes(orjson.dumps(timeseries))
    (root / "metrics" / "fetch_sizes.json").write_bytes(orjson.dumps(sizes))
    (root / "scenario.yaml").write_text(
        'name: idle-fetch\ndescription: "</pre><script>alert(2)</script>"\n'
        "brokers: 2\ntopics:\n  - name: test\n    partitions: 1000\n    replication_factor: 2\n",
        encoding="utf-8",
    )
    return root


@pytest.fixture
def report_run(tmp_path: Path) -> Path:
    return write_report_run(tmp_path / "run")


@pytest.fixture
def report_run_with_consumers(tmp_path: Path) -> Path:
    return write_report_run(tmp_path / "run-consumers", consumers=True)
