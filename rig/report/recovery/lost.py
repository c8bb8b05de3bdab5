"""The records a run lost, let diverge, or let a consumer group skip (metrics/lost_records.json,
or for an older run the violations in summary.json): grouped by partition, and batch by batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rig import rundir
from rig.report.format import DASH, fmt_int, fmt_seconds
from rig.report.inputs import RunInputs, dig, number
from rig.report.recovery.values import Fmt, read_table

__all__ = [
    "MAX_LOST_SHOWN",
    "lost_table",
]

MAX_LOST_SHOWN = 100  # rows of the lost-or-diverged table; metrics/lost_records.json has them all


def _partition(row: Mapping[str, Any]) -> str:
    topic, partition = row.get("topic"), row.get("partition")
    if topic is None and partition is None:
        return DASH
    return f"{topic if topic is not None else '?'}-{partition if partition is not None else '?'}"


def _acks_text(acks: Any) -> str:
    return "all" if acks == -1 else DASH if acks is None else str(acks)


def _lost_row(variant: str, row: Mapping[str, Any]) -> dict[str, Any]:
    acks = row.get("acks")
    leader = row.get("leader")
    return {
        "variant": variant,
        "what": f"lost (acks={_acks_text(acks)})",
        "bad": "fail" if acks == -1 else "unknown",
        "partition": _partition(row),
        "offset": number(row.get("offset")),
        "records": number(row.get("records")),
        "acked_ms": number(row.get("acked_at_ms")),
        "detail": (f"leader at the end: broker {leader}" if leader is not None else "")
        + (f"; batch id {row['id']}" if row.get("id") is not None else ""),
    }


def _diverged_row(variant: str, row: Mapping[str, Any]) -> dict[str, Any]:
    # Each batch as (producer, first sequence); runs written before 2026-11-30 named them
    # replica_id and leader_id, which the analysis read as Fetch's replica_id (a broker id).
    theirs = row.get("leader_batch", row.get("leader_id"))
    ours = row.get("replica_batch", row.get("replica_id"))
    detail = (f"broker {row.get('broker', '?')} holds batch {ours}; "
              f"leader {row.get('leader', '?')} holds "
              + (f"batch {theirs}" if theirs is not None else "nothing there"))
    return {
        "variant": variant,
        "what": "diverged",
        "bad": "fail",
        "partition": _partition(row),
        "offset": number(row.get("offset")),
        "records": None,
        "acked_ms": None,
        "detail": detail,
    }


def _skipped_row(variant: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """A consumer group's skipped batches in one partition (one consumers-skip-nothing
    finding: its first offset, where its last batch ends, how many batches). The only row
    that spans batches: the others are one batch at one offset."""
    end = number(row.get("end_offset"))
    batches = number(row.get("batches"))
    return {
        "variant": variant,
        "what": f"skipped by {row.get('group', '?')}",
        "bad": "fail",
        "partition": _partition(row),
        "offset": number(row.get("offset")),
        "records": number(row.get("records")),
        "acked_ms": None,
        "batches": int(batches) if batches else 1,
        "last_offset": None if end is None else int(end) - 1,
        "detail": "committed, below the group's position, never read by it"
        + (f" (offsets up to {fmt_int(end - 1)})" if end is not None else ""),
    }


_ROWS = {"lost": _lost_row, "diverged": _diverged_row, "skipped": _skipped_row}


def _span_text(low: float | None, high: float | None, fmt: Fmt) -> str:
    if low is None or high is None:
        return DASH
    return fmt(low) if low == high else f"{fmt(low)} – {fmt(high)}"


def _grouped(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per (variant, what, partition): a lost run of batches reads as one line."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["variant"], row["what"], row["partition"]), []).append(row)
    out = []
    for (variant, what, partition), members in groups.items():
        offsets = [r["offset"] for r in members if r["offset"] is not None]
        lasts = [last for r in members if (last := r.get("last_offset", r["offset"])) is not None]
        acked = [r["acked_ms"] / 1000 for r in members if r["acked_ms"] is not None]
        records = [r["records"] for r in members if r["records"] is not None]
        out.append({
            "variant": variant, "what": what, "bad": members[0]["bad"], "partition": partition,
            "batches": fmt_int(sum(r.get("batches", 1) for r in members)),
            "records": fmt_int(sum(records)) if records else DASH,
            "offsets": _span_text(min(offsets, default=None), max(lasts, default=None),
                                  fmt_int),
            "acked_at": _span_text(min(acked, default=None), max(acked, default=None),
                                   fmt_seconds),
        })
    return out


def lost_table(inputs: RunInputs, variants: Sequence[str]) -> dict[str, Any]:
    """Lost records and diverged replicas (metrics/lost_records.json; for a run analysed before
    that table, the no-acked-loss and replicas-agree violations of summary.json): grouped by
    partition, and batch by batch (both capped)."""
    table = read_table(inputs.run_dir, rundir.LOST_RECORDS)
    rows: list[dict[str, Any]] = []
    skipped = False
    for v in variants:
        if table is not None:
            found = [row for row in table if row.get("variant") == v]
        else:
            violations = dig(inputs.summary, "variants", v, "checks", "violations")
            found = [{**x, "what": "lost" if x.get("check") == "no-acked-loss" else "diverged"}
                     for x in (violations if isinstance(violations, list) else [])
                     if isinstance(x, Mapping)
                     and x.get("check") in ("no-acked-loss", "replicas-agree")]
            found.sort(key=lambda x: x["what"] != "lost")  # stable: lost first, as the table
        rows += [_ROWS.get(str(row.get("what")), _diverged_row)(v, row) for row in found]
        skipped = skipped or any(row.get("what") == "skipped" for row in found)
    shown = [
        {**row, "offset": fmt_int(row["offset"]), "records": fmt_int(row["records"]),
         "acked_at": fmt_seconds(None if row["acked_ms"] is None else row["acked_ms"] / 1000)}
        for row in rows[:MAX_LOST_SHOWN]
    ]
    groups = _grouped(rows)
    return {"groups": groups[:MAX_LOST_SHOWN], "groups_total": len(groups), "rows": shown,
            "total": len(rows),
            "batches": sum(r.get("batches", 1) for r in rows),  # a skipped row spans many
            "skipped": skipped,
            "partitions": len({(r["variant"], r["partition"]) for r in rows}),
            "variants": [v for v in variants if any(r["variant"] == v for r in rows)]}
