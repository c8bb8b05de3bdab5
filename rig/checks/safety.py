"""Safety invariants of replication, judged online from events and at the end from the logs.

A check reads events as they are written and, at the end, a read-only view of the final state
that the model hands it (rig.cluster.final_state); it never writes into the log it observes.
What it finds at the end it returns as findings (`record.lost`, `check.violation`), which the
simulation appends to the run's log in the order found.

- no acknowledged record is lost: every batch a producer saw acknowledged with acks=all is in
  the final committed log (below the leader's HW) of its partition (losses under acks=1 are
  reported as `record.lost` findings but are within Kafka's contract);
- replicas agree below their high watermark: no follower holds, below its HW, a batch the
  leader does not hold at that offset (divergence);
- at most one leader per partition and leader epoch;
- (rig/checks/consumer_reads.py) no consumer reads a record that later disappears.
A partition with no leader at the end cannot be judged: its result is unknown, not ok.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rig.checks.base import CheckResult, Finding, Status
from rig.events import names

if TYPE_CHECKING:
    from rig.cluster.final_state import FinalState, ReplicaView

MAX_KEPT = 100


class _Base:
    name = ""
    events: frozenset[str] | None = frozenset()  # judged at the end only: observes nothing

    def __init__(self) -> None:
        self.violations: list[dict[str, Any]] = []
        self.count = 0
        self.unknown: list[str] = []
        self.found: list[Finding] = []  # what finish returns

    def _violate(self, logged: bool, **details: Any) -> None:
        """Count a violation; `logged`: also a check.violation finding (those found at the
        end; one found online is in the result only)."""
        self.count += 1
        if len(self.violations) < MAX_KEPT:
            self.violations.append({"check": self.name, **details})
        if logged:
            self.found.append((names.CHECK_VIOLATION, {"check": self.name, **details}))

    def observe(self, event: Mapping[str, Any]) -> None:
        pass

    def finish(self, final: FinalState) -> list[Finding]:
        return []

    def _final_leader(self, final: FinalState, key: tuple[str, int]) -> ReplicaView | None:
        """The partition's leader replica once the run settled; None (and `key` noted as not
        judged) when it has none."""
        replica = final.partitions[key].final_leader()
        if replica is None:
            self.unknown.append(f"{key[0]}-{key[1]} (no leader)")
        return replica

    def result(self) -> CheckResult:
        if self.count:
            status = Status.FAILED
        elif self.unknown:
            status = Status.UNKNOWN
        else:
            status = Status.OK
        note = f"{self.count} violations" + (
            f"; not judged: {', '.join(self.unknown[:5])}" if self.unknown else "")
        return CheckResult(self.name, status, self.violations, note)


class NoAckedLoss(_Base):
    name = "no-acked-loss"
    events = frozenset({names.PRODUCE_ACK})

    def __init__(self) -> None:
        super().__init__()
        self.acked: dict[tuple[str, int], list[Mapping[str, Any]]] = {}

    def observe(self, event: Mapping[str, Any]) -> None:
        if event["event"] == names.PRODUCE_ACK and event["acks"] != 0:
            self.acked.setdefault((event["topic"], event["partition"]), []).append(event)

    def finish(self, final: FinalState) -> list[Finding]:
        for key, acks in sorted(self.acked.items()):
            replica = self._final_leader(final, key)
            if replica is None:
                continue
            committed = {identity for _, end, identity in replica.batches()
                         if end <= replica.high_watermark}
            for ack in acks:
                identity = tuple(ack["id"])
                # Compaction and retention remove records by policy: not a loss.
                if (identity in committed or replica.removed(identity)
                        or ack["offset"] < replica.log_start_offset):
                    continue
                details = dict(topic=key[0], partition=key[1], id=ack["id"],
                               offset=ack["offset"], records=ack["records"], acks=ack["acks"],
                               acked_at_ms=ack["t_ms"], leader=final.partitions[key].leader)
                self.found.append((names.RECORD_LOST, details))
                # Only acks=all promises durability; an acks=1 loss is counted, not a violation.
                if ack["acks"] == -1:
                    self._violate(True, **details,
                                  message="acknowledged, then absent from the committed log")
        return self.found


class ReplicasAgree(_Base):
    name = "replicas-agree"

    def finish(self, final: FinalState) -> list[Finding]:
        for key, partition in sorted(final.partitions.items()):
            lead = partition.replicas.get(partition.leader)
            if lead is None or not lead.alive:
                self.unknown.append(f"{key[0]}-{key[1]} (no leader)")
                continue
            for broker_id in partition.assignment:
                follower = partition.replicas.get(broker_id)
                if broker_id == partition.leader or follower is None:
                    continue  # (None: a replica a reassignment added, not created yet: empty)
                limit = min(follower.high_watermark, lead.high_watermark)
                for base, end, identity in follower.batches():
                    if end > limit:
                        break
                    theirs = lead.identity_at(base)
                    if theirs is None and (lead.removed(identity)
                                           or end <= lead.log_start_offset):
                        continue  # the leader's cleaner or retention removed it: no divergence
                    if theirs != identity:
                        self._violate(True, topic=key[0], partition=key[1],
                                      broker=broker_id, leader=partition.leader,
                                      offset=base, replica_batch=list(identity),
                                      leader_batch=list(theirs) if theirs else None,
                                      message="replicas hold different records below the HW")
                        break
        return self.found


class OneLeaderPerEpoch(_Base):
    """No two brokers lead a partition at the same leader epoch: every epoch a broker starts
    leading at, as a new leader or re-elected (`replica.epoch_changed` with role leader)."""

    name = "one-leader-per-epoch"
    events = frozenset({names.REPLICA_BECOME_LEADER, names.REPLICA_EPOCH_CHANGED})

    def __init__(self) -> None:
        super().__init__()
        self.leaders: dict[tuple[str, int, int], int] = {}

    def observe(self, event: Mapping[str, Any]) -> None:
        name = event["event"]
        if name != names.REPLICA_BECOME_LEADER and (name != names.REPLICA_EPOCH_CHANGED
                                                    or event["role"] != "leader"):
            return
        key = (event["topic"], event["partition"], event["epoch"])
        first = self.leaders.setdefault(key, event["broker"])
        if first != event["broker"]:
            self._violate(False, topic=key[0], partition=key[1], epoch=key[2],
                          brokers=[first, event["broker"]], t_ms=event["t_ms"],
                          message="two leaders in one epoch")
