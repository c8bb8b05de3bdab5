"""The section's headline numbers, a row per metric and a column per variant: RECOVERY_METRICS,
which the comparison page shows too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rig.report.format import fmt_by_name, fmt_int, fmt_ms_spread, fmt_seconds
from rig.report.inputs import dig, number
from rig.report.recovery.values import Fmt

__all__ = [
    "RECOVERY_METRICS",
    "has_recovery_numbers",
    "headline_rows",
]

# (label, unit, path under variants.<name>, format, a non-zero value is bad news).
# The comparison page shows the same rows (rig.report.compare).
RECOVERY_METRICS: tuple[tuple[str, str, tuple[str, ...], Fmt, bool], ...] = (
    ("Records acknowledged", "records", ("produce", "acked"), fmt_int, False),
    ("Acknowledged with acks=all", "records", ("produce", "acked_all"), fmt_int, False),
    ("Lost, acknowledged with acks=all", "records", ("produce", "acked_all_lost"), fmt_int, True),
    ("Lost, acknowledged with any acks", "records", ("produce", "acked_lost"), fmt_int, True),
    ("Produce errors", "responses, retried or not", ("produce", "errors"), fmt_int, False),
    ("Leader elections", "", ("replication", "leader_elections"), fmt_int, False),
    ("Unclean leader elections", "", ("replication", "unclean_elections"), fmt_int, True),
    ("ELR elections (KRaft, KIP-966)", "", ("replication", "elr_elections"), fmt_int, False),
    ("Last-known-leader elections (KRaft)", "", ("replication", "last_known_leader_elections"),
     fmt_int, True),
    ("ISR shrinks", "", ("replication", "isr_shrinks"), fmt_int, False),
    ("ISR expands", "", ("replication", "isr_expands"), fmt_int, False),
    ("Truncated records", "records", ("replication", "truncated_records"), fmt_int, False),
    ("Diverged partitions", "partitions", ("replication", "diverged_partitions"), fmt_int, True),
    # Partition-seconds to the millisecond, as summary.json holds them: side by side, 65.970
    # against 124.337 (four significant digits gave 65.97 against 124.3).
    ("Offline", "partition-seconds", ("replication", "offline_partition_seconds"), fmt_seconds,
     True),
    ("Under-replicated", "partition-seconds",
     ("replication", "under_replicated_partition_seconds"), fmt_seconds, False),
    ("Under min ISR", "partition-seconds, acks=all refused",
     ("replication", "under_min_isr_partition_seconds"), fmt_seconds, False),
    ("Fencing delay", "s from a crash to broker.fenced (ZooKeeper: session expiry), "
     "min / p50 / max", ("replication", "fencing_delay_ms"), fmt_ms_spread, False),
    ("Longest detection", "s, fault injected to the first reaction",
     ("replication", "max_detection_seconds"), fmt_seconds, False),
    ("Longest recovery", "s, fault injected to every ISR full",
     ("replication", "max_recovery_seconds"), fmt_seconds, False),
    ("Catch-up fetched", "bytes, healed to every ISR full",
     ("replication", "catch_up_bytes"), fmt_int, False),
    ("Follower fetches refused", "partitions a leader answered with an error, by error",
     ("fetch_refusals", "follower"), fmt_by_name, False),
    ("Largest consumer lag", "records behind the HW", ("consumers", "max_lag"), fmt_int, False),
    ("Consumer fetches refused", "partitions a leader answered with an error, by error",
     ("fetch_refusals", "consumer"), fmt_by_name, False),
    ("Consumer position resets", "out of range, or a truncation detected (2.3+)",
     ("consumers", "offset_resets"), fmt_int, False),
    ("Skipped by consumers", "committed records a group's position passed unread",
     ("consumers", "skipped"), fmt_int, True),
    ("Faults", "", ("replication", "faults"), fmt_int, False),
)


def has_recovery_numbers(summary: Mapping[str, Any], variant: str) -> bool:
    """Does summary.json hold produce or replication numbers for `variant`?"""
    return any(isinstance(dig(summary, "variants", variant, part), Mapping)
               for part in ("produce", "replication"))


def headline_rows(summary: Mapping[str, Any], variants: Sequence[str]) -> list[dict[str, Any]]:
    """A row per RECOVERY_METRICS entry, a cell per variant; a metric no variant's
    summary holds is left out."""
    out = []
    for label, unit, path, fmt, bad in RECOVERY_METRICS:
        values = [dig(summary, "variants", v, *path) for v in variants]
        if all(value is None for value in values):
            continue  # a key an older summary.json lacks: no row of dashes
        out.append({
            "label": label,
            "unit": unit,
            "emph": label.startswith("Lost"),
            # Numbers stay whole; a count by name (a mapping: fmt_by_name's words) wraps
            # between its words.
            "cells": [{"text": fmt(value), "bad": bad and bool(number(value)),
                       "wrap": isinstance(value, Mapping)} for value in values],
        })
    return out
