"""The replication stage's counts: elections, ISR changes, truncations, halts, fencings and the
control plane's events, per variant, from one aggregation over the event log
(rig.analysis.replication puts them in the summary)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rig.events import names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def counts_of_events(events: DataFrame) -> dict[str, dict[str, Any]]:
    """Per variant, the counts (and record sums) of the replication stage's events, in one
    Spark aggregation."""
    from pyspark.sql import functions as F

    def records_of(event: str, extra: Any = None) -> Any:
        cond = F.col("event") == event
        if extra is not None:
            cond = cond & extra
        return F.sum(F.when(cond, F.col("records")).otherwise(0))

    def count_of(event: str, extra: Any = None) -> Any:
        cond = F.col("event") == event
        if extra is not None:
            cond = cond & extra
        return F.sum(F.when(cond, 1).otherwise(0))

    rows = events.groupBy("variant").agg(
        records_of(names.PRODUCE_ACK).alias("acked"),
        count_of(names.PRODUCE_ACK).alias("acked_batches"),
        records_of(names.PRODUCE_ACK, F.col("acks") == -1).alias("acked_all"),
        count_of(names.PRODUCE_ERROR).alias("errors"),
        records_of(names.RECORD_LOST).alias("acked_lost"),
        records_of(names.RECORD_LOST, F.col("acks") == -1).alias("acked_all_lost"),
        count_of(names.LEADER_ELECTED).alias("leader_elections"),
        # KRaft's election of the last known leader (KIP-966) is unclean too (RECOVERING).
        count_of(names.LEADER_ELECTED, F.col("election").isin("unclean", "last-known-leader")
                 ).alias("unclean_elections"),
        count_of(names.LEADER_ELECTED, F.col("election") == "elr").alias("elr_elections"),
        count_of(names.LEADER_ELECTED, F.col("election") == "last-known-leader").alias(
            "last_known_leader_elections"),
        count_of(names.ISR_SHRINK).alias("isr_shrinks"),
        count_of(names.ISR_EXPAND).alias("isr_expands"),
        records_of(names.REPLICA_TRUNCATE).alias("truncated_records"),
        # Truncations by where from: OffsetsForLeaderEpoch (0.11–2.7), a diverging epoch (2.8+)
        count_of(names.REPLICA_TRUNCATE, F.col("reason") == "leader-epoch").alias(
            "leader_epoch_truncations"),
        count_of(names.REPLICA_TRUNCATE, F.col("reason") == "diverging-epoch").alias(
            "diverging_epoch_truncations"),
        # KRaft's quorum (docs/kafka.md §12): elections after t=0, fencings, staleness.
        count_of(names.CONTROLLER_ELECTED, F.col("t_ms") > 0).alias("controller_elections"),
        count_of(names.BROKER_FENCED).alias("brokers_fenced"),
        F.max(F.when(F.col("event") == names.CONTROLLER_ELECTED, F.col("leaderless_ms"))
              ).alias("max_leaderless_ms"),
        F.max(F.when(F.col("event") == names.BROKER_METADATA_RESUMED, F.col("stale_ms"))
              ).alias("max_metadata_stale_ms"),
        count_of(names.BROKER_HALT).alias("broker_halts"),
        count_of(names.BROKER_STARTUP_FAILED).alias("failed_starts"),  # refused by ZooKeeper
        count_of(names.FETCHER_FENCED).alias("fenced_fetches"),  # KIP-320 (2.1+)
        # Reassignments (KIP-455): NEW_LEADER_ELECTED answers, elections, replicas made and gone
        count_of(names.ALTER_PARTITION_REJECTED, F.col("error_code") == 108).alias(
            "new_leader_elected"),
        count_of(names.LEADER_ELECTED, F.col("reason") == "reassignment").alias(
            "reassignment_elections"),
        count_of(names.REPLICA_CREATED).alias("replicas_created"),
        count_of(names.REPLICA_DELETED).alias("replicas_deleted"),
        # Followers that deleted their log to start again at the leader's log start
        count_of(names.REPLICA_TRUNCATE_FULLY).alias("full_truncations"),
    ).collect()
    return {row["variant"]: row.asDict() for row in rows if row["variant"] is not None}
