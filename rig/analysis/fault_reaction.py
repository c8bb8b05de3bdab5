"""Per fault: how soon the cluster reacted, and how many bytes the recovering replicas fetched.

- detection: from the fault's injection to the first reaction that involves a faulted broker:
  an ISR shrink that removes it, a leader election away from it, or a partition going offline
  with it in the last ISR (the controller's or a leader's first move);
- catch-up bytes: follower fetch responses sent to the faulted brokers from the heal until
  every ISR is full again (or the end of the run): wire bytes, and the record bytes in them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rig.analysis.events import fetch_runs, occurrences_between
from rig.events import names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["REACTIONS", "add_detection_and_catch_up"]

# The events that may be a fault's first reaction.
REACTIONS = (names.ISR_SHRINK, names.LEADER_ELECTED, names.PARTITION_OFFLINE)


def _brokers(targets: Sequence[Any] | None) -> set[str]:
    """The broker ids among a fault's targets, as text (nodes such as "zk" are dropped)."""
    return {str(t) for t in targets or () if str(t).lstrip("-").isdigit()}


def _first_reaction(reactions: Sequence[Mapping[str, Any]], variant: str, start: float,
                    brokers: set[str]) -> float | None:
    for row in reactions:
        if row["variant"] != variant or row["t_ms"] < start:
            continue
        event = row["event"]
        if event == names.ISR_SHRINK and brokers & {str(b) for b in row["removed"] or ()}:
            return float(row["t_ms"])
        if event == names.LEADER_ELECTED and str(row["previous"]) in brokers:
            return float(row["t_ms"])
        if event == names.PARTITION_OFFLINE and brokers & {str(b) for b in row["isr"] or ()}:
            return float(row["t_ms"])
    return None


def add_detection_and_catch_up(events: DataFrame, reactions: Sequence[Mapping[str, Any]],
                               entries: list[dict[str, Any]],
                               end_ms: dict[str, float | None]) -> None:
    """Add `detected_ms`, `detection_seconds`, `catch_up_bytes` and `catch_up_record_bytes` to
    each recovery entry (in place). `events` is read with rig.analysis.events.with_fetch_fields;
    `reactions` are its REACTIONS events (variant, t_ms, event, removed, previous, isr) in
    (variant, seq) order; `end_ms` is each variant's last event time."""
    from pyspark.sql import functions as F

    if not entries:
        return
    windows: list[tuple[int, str, str, float, float]] = []
    for i, entry in enumerate(entries):
        brokers = _brokers(entry.get("targets"))
        detected = _first_reaction(reactions, entry["variant"], entry["inject_ms"], brokers)
        entry["detected_ms"] = detected
        entry["detection_seconds"] = (round((detected - entry["inject_ms"]) / 1000, 6)
                                      if detected is not None else None)
        start = entry.get("heal_ms")
        stop = entry.get("recovered_ms")
        if stop is None or (start is not None and stop < start):
            stop = end_ms.get(entry["variant"])
        entry["catch_up_bytes"] = entry["catch_up_record_bytes"] = 0
        if start is None or stop is None:
            continue
        windows.extend((i, entry["variant"], b, float(start), float(stop)) for b in brokers)
    if not windows:
        return
    spark = events.sparkSession
    frame = spark.createDataFrame(windows, "i int, variant string, source string, "
                                           "start double, stop double")
    responses = (fetch_runs(events, only=names.FETCH_RESPONSE)
                 .where(F.col("role") == "follower")
                 .select("variant", "source", "t_ms", "first_us", "period_us", "count",
                         "wire_bytes", "records_bytes"))
    # How many of each run's responses (one for a plain fetch.response, any number for an
    # idle run) were sent inside the window.
    n = occurrences_between(F.col("start"), F.col("stop"))
    sums = (responses.join(F.broadcast(frame), ["variant", "source"])
            .select("i", n.alias("n"), "wire_bytes", "records_bytes")
            .where(F.col("n") > 0)
            .groupBy("i").agg(F.sum(F.col("n") * F.col("wire_bytes")).alias("wire"),
                              F.sum(F.col("n") * F.col("records_bytes")).alias("records"))
            .collect())
    for row in sums:
        entries[row["i"]]["catch_up_bytes"] = int(row["wire"] or 0)
        entries[row["i"]]["catch_up_record_bytes"] = int(row["records"] or 0)
