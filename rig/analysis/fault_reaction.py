"""Per fault: how soon the cluster reacted, and how many bytes the recovering replicas fetched.

- detection: from the fault's injection to the first reaction that involves a faulted broker:
  an ISR shrink that removes it, a leader election away from it, or a partition going offline
  with it in the last ISR (the controller's or a leader's first move);
- ISR exit: from the injection until no partition's ISR, as the controller last committed it
  (zk.partition_state in ZooKeeper, partition.change in the KRaft metadata log), holds a
  faulted broker (None when one still does at the end, as the last member of an offline
  partition; 0 when none did);
- catch-up bytes: follower fetch responses sent to the faulted brokers from the heal until
  every ISR is full again (or the end of the run): wire bytes, and the record bytes in them; for
  a reassignment, sent to the brokers it adds from its injection until it completes (they copy
  the log: rig.analysis.reassignment);
- visibility delay of acknowledged records: from a batch's produce.ack to the first time the
  partition leader's HW (its hw.advance events) covers the batch's last record, 0 when it
  already did (acks=all); per fault over the batches acknowledged from its injection until it
  healed and recovered (or the end of the run), per variant over every batch.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from rig.analysis.events import fetch_runs, occurrences_between, to_arrow
from rig.analysis.reassignment import reassignments
from rig.events import names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["REACTIONS", "CatchUpWindow", "add_catch_up", "add_detection", "add_isr_exit",
           "catch_up_sums", "first_acks_all", "seconds_after", "visibility_delays"]

# (recovery entry index, variant, faulted broker, from ms, until ms): whose fetches catch up.
CatchUpWindow = tuple[int, str, str, float, float]

# The events that may be a fault's first reaction.
REACTIONS = (names.ISR_SHRINK, names.LEADER_ELECTED, names.PARTITION_OFFLINE)


def seconds_after(start_ms: float, t_ms: float) -> float:
    """Seconds from `start_ms` to `t_ms`, to the microsecond: the simulated clock's resolution,
    so exact, without the float noise of dividing milliseconds (16.004008, not
    16.004008000000002)."""
    return round((t_ms - start_ms) / 1000, 6)


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


def add_detection(rows: Sequence[Mapping[str, Any]], entries: list[dict[str, Any]],
                  end_ms: dict[str, float | None]) -> list[CatchUpWindow]:
    """Add `detected_ms`, `detection_seconds`, and `catch_up_bytes` and `catch_up_record_bytes`
    at 0, to each recovery entry (in place), and to a reassignment's entry what it `moved`
    (topic, partition, adding); return the windows whose follower fetches make the catch-up
    (`catch_up_sums` counts them). `rows` are the replication stage's selected events in
    (variant, seq) order: the REACTIONS (variant, t_ms, event, removed, previous, isr), and
    what rig.analysis.reassignment reads; `end_ms` is each variant's last event time."""
    reactions = [row for row in rows if row["event"] in REACTIONS]
    moved = reassignments(rows)
    windows: list[CatchUpWindow] = []
    for i, entry in enumerate(entries):
        brokers = _brokers(entry.get("targets"))
        detected = _first_reaction(reactions, entry["variant"], entry["inject_ms"], brokers)
        entry["detected_ms"] = detected
        entry["detection_seconds"] = (seconds_after(entry["inject_ms"], detected)
                                      if detected is not None else None)
        start = entry.get("heal_ms")
        stop = entry.get("recovered_ms")
        reassigned = moved.get((entry["variant"], entry["fault"]))
        if reassigned is not None:  # the replicas it adds copy the log until it completes
            brokers, start = set(reassigned.adding), entry["inject_ms"]
            stop = reassigned.completed_ms
            entry["moved"] = {"topic": reassigned.topic, "partition": reassigned.partition,
                              "adding": [int(b) for b in reassigned.adding]}
        if stop is None or (start is not None and stop < start):
            stop = end_ms.get(entry["variant"])
        entry["catch_up_bytes"] = entry["catch_up_record_bytes"] = 0
        if start is None or stop is None:
            continue
        windows.extend((i, entry["variant"], b, float(start), float(stop)) for b in brokers)
    return windows


def catch_up_sums(events: DataFrame, windows: Sequence[CatchUpWindow]
                  ) -> dict[int, tuple[int, int]]:
    """Per recovery entry (its index), the wire and record bytes of the follower fetch
    responses sent to its faulted brokers inside its window. `events` is read with
    rig.analysis.events.with_fetch_fields. One Spark job; none without windows."""
    from pyspark.sql import functions as F

    if not windows:
        return {}
    spark = events.sparkSession
    frame = spark.createDataFrame(list(windows), "i int, variant string, source string, "
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
    return {row["i"]: (int(row["wire"] or 0), int(row["records"] or 0)) for row in sums}


def add_catch_up(entries: list[dict[str, Any]], sums: Mapping[int, tuple[int, int]]) -> None:
    """Set `catch_up_bytes` and `catch_up_record_bytes` from catch_up_sums (in place)."""
    for i, (wire, records) in sums.items():
        entries[i]["catch_up_bytes"] = wire
        entries[i]["catch_up_record_bytes"] = records


def first_acks_all(events: DataFrame, entries: Sequence[Mapping[str, Any]]) -> dict[int, float]:
    """Per recovery entry (its index), the time of the first acks=all acknowledgement of its
    variant at or after its injection (none: no such acknowledgement came). One Spark job."""
    from pyspark.sql import functions as F

    if not entries:
        return {}
    spark = events.sparkSession
    faults = spark.createDataFrame([(i, e["variant"], float(e["inject_ms"]))
                                    for i, e in enumerate(entries)],
                                   "i int, variant string, inject double")
    acks = (events.where((F.col("event") == names.PRODUCE_ACK) & (F.col("acks") == -1))
            .select("variant", "t_ms"))
    return {row["i"]: row["first"] for row in (
        acks.join(F.broadcast(faults), "variant").where(F.col("t_ms") >= F.col("inject"))
        .groupBy("i").agg(F.min("t_ms").alias("first")).collect())}


def add_isr_exit(rows: Sequence[Mapping[str, Any]], entries: list[dict[str, Any]]) -> None:
    """Add `isr_exit_ms` to each recovery entry (in place). `rows`: partition.assigned,
    zk.partition_state and partition.change events (variant, event, t_ms, topic, partition,
    replicas, isr) in (variant, seq) order; every partition starts with its whole assignment
    in the ISR."""
    for entry in entries:
        brokers = {int(b) for b in _brokers(entry.get("targets"))}
        entry["isr_exit_ms"] = None
        if not brokers:
            continue
        start = entry["inject_ms"]
        holders: set[tuple[Any, Any]] = set()  # partitions whose ISR holds a faulted broker
        started = False
        for row in rows:
            if row["variant"] != entry["variant"]:
                continue
            if not started and row["t_ms"] >= start:
                started = True
                if not holders:
                    entry["isr_exit_ms"] = 0.0
                    break
            isr = row["replicas"] if row["event"] == names.PARTITION_ASSIGNED else row["isr"]
            key = (row["topic"], row["partition"])
            if brokers & set(isr or ()):
                holders.add(key)
            else:
                holders.discard(key)
            if started and not holders:
                entry["isr_exit_ms"] = round(row["t_ms"] - start, 3)
                break
        else:
            if not started and not holders:
                entry["isr_exit_ms"] = 0.0


def visibility_delays(events: DataFrame) -> dict[str, list[tuple[float, float]]]:
    """Per variant, (acknowledged at, visibility delay in ms) of every acknowledged batch whose
    records the leader's HW came to cover. `events` has the fields event, variant, t_ms, topic,
    partition, offset, records, hw and leader (a flag in hw.advance)."""
    from pyspark.sql import functions as F

    chosen = (events.where((F.col("event") == names.PRODUCE_ACK)
                           | ((F.col("event") == names.HW_ADVANCE) & F.col("leader")))
              .select("variant", "event", "t_ms", "topic", "partition", "offset", "records",
                      "hw"))
    table = to_arrow(chosen)
    # Column lists, not a dict per row: a busy run has hundreds of thousands of these rows.
    variant, event, t_ms, topic, partition, offset, records, hw = (
        table.column(name).to_pylist() for name in (
            "variant", "event", "t_ms", "topic", "partition", "offset", "records", "hw"))
    rows = list(zip(variant, event, t_ms, topic, partition, offset, records, hw, strict=True))
    advances: dict[tuple[Any, Any, Any], list[tuple[float, int]]] = {}
    for v, name, t, tp, p, _, _, h in rows:
        if name == names.HW_ADVANCE:
            advances.setdefault((v, tp, p), []).append((t, h))
    # Per partition, the times of its leaders' HW advances and the highest HW so far: the
    # first time it covers an offset is a binary search.
    seen: dict[tuple[Any, Any, Any], tuple[list[float], list[int]]] = {}
    for key, points in advances.items():
        points.sort()
        seen[key] = ([t for t, _ in points], list(accumulate((h for _, h in points), max)))
    out: dict[str, list[tuple[float, float]]] = {}
    for v, name, t, tp, p, first, count, _ in rows:
        if name != names.PRODUCE_ACK or first is None:
            continue
        times, highest = seen.get((v, tp, p), ([], []))
        end = first + (count or 1)  # the HW past the batch's last record
        before = bisect_right(times, t)
        if before and highest[before - 1] >= end:
            delay = 0.0
        else:
            j = bisect_left(highest, end, lo=before)
            if j == len(highest):
                continue  # never visible (lost, or the run ended first)
            delay = times[j] - t
        out.setdefault(v, []).append((t, round(delay, 3)))
    return out
