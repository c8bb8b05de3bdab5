"""Safety invariants of replication, judged online from events and at the end from the logs.

- no acknowledged record is lost: every batch a producer saw acknowledged with acks=all is in
  the final committed log (below the leader's HW) of its partition (losses under acks=1 are
  reported as `record.lost` events but are within Kafka's contract);
- replicas agree below their high watermark: no follower holds, below its HW, a batch the
  leader does not hold at that offset (divergence);
- at most one leader per partition and leader epoch;
- (rig/checks/consumer_reads.py) no consumer reads a record that later disappears.
A partition with no leader at the end cannot be judged: its result is unknown, not ok.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rig.checks.base import CheckResult, Status
from rig.cluster.replica import Role
from rig.events import names

if TYPE_CHECKING:
    from rig.cluster.cluster import Cluster
    from rig.cluster.replica import Replica

MAX_KEPT = 100


class _Base:
    name = ""

    def __init__(self) -> None:
        self.violations: list[dict[str, Any]] = []
        self.count = 0
        self.unknown: list[str] = []

    def _violate(self, cluster: Cluster | None, **details: Any) -> None:
        self.count += 1
        if len(self.violations) < MAX_KEPT:
            self.violations.append({"check": self.name, **details})
        if cluster is not None:
            cluster.log.emit(names.CHECK_VIOLATION, check=self.name, **details)

    def observe(self, event: Mapping[str, Any]) -> None:
        pass

    def finish(self, cluster: Cluster) -> None:
        pass

    def _final_leader(self, cluster: Cluster, key: tuple[str, int]) -> Replica | None:
        """The partition's leader replica once the run settled; None (and `key` noted as not
        judged) when it has none."""
        leader = cluster.brokers.get(cluster.zk.partitions[key].leader)
        replica = leader.replicas[key] if leader is not None and leader.alive else None
        if replica is None or replica.role is not Role.LEADER:
            self.unknown.append(f"{key[0]}-{key[1]} (no leader)")
            return None
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

    def __init__(self) -> None:
        super().__init__()
        self.acked: dict[tuple[str, int], list[Mapping[str, Any]]] = {}

    def observe(self, event: Mapping[str, Any]) -> None:
        if event["event"] == names.PRODUCE_ACK and event["acks"] != 0:
            self.acked.setdefault((event["topic"], event["partition"]), []).append(event)

    def finish(self, cluster: Cluster) -> None:
        for key, acks in sorted(self.acked.items()):
            replica = self._final_leader(cluster, key)
            if replica is None:
                continue
            committed = {b.identity for b in replica.log.batches
                         if b.end_offset <= replica.high_watermark}
            # Compaction and retention remove records by policy: not a loss.
            committed |= replica.log.removed
            for ack in acks:
                if tuple(ack["id"]) in committed or ack["offset"] < replica.log.log_start_offset:
                    continue
                details = dict(topic=key[0], partition=key[1], id=ack["id"],
                               offset=ack["offset"], records=ack["records"], acks=ack["acks"],
                               acked_at_ms=ack["t_ms"],
                               leader=cluster.zk.partitions[key].leader)
                cluster.log.emit(names.RECORD_LOST, **details)
                # Only acks=all promises durability; an acks=1 loss is counted, not a violation.
                if ack["acks"] == -1:
                    self._violate(cluster, **details,
                                  message="acknowledged, then absent from the committed log")


class ReplicasAgree(_Base):
    name = "replicas-agree"

    def finish(self, cluster: Cluster) -> None:
        for key, state in sorted(cluster.zk.partitions.items()):
            leader = cluster.brokers.get(state.leader)
            if leader is None or not leader.alive:
                self.unknown.append(f"{key[0]}-{key[1]} (no leader)")
                continue
            lead = leader.replicas[key]
            for broker_id in cluster.assignment(key):
                if broker_id == state.leader:
                    continue
                follower = cluster.brokers[broker_id].replicas[key]
                limit = min(follower.high_watermark, lead.high_watermark)
                for batch in follower.log.batches:
                    if batch.end_offset > limit:
                        break
                    theirs = lead.log.identity_at(batch.base_offset)
                    if theirs is None and (batch.identity in lead.log.removed
                                           or batch.end_offset <= lead.log.log_start_offset):
                        continue  # the leader's cleaner or retention removed it: no divergence
                    if theirs != batch.identity:
                        self._violate(cluster, topic=key[0], partition=key[1],
                                      broker=broker_id, leader=state.leader,
                                      offset=batch.base_offset, replica_id=list(batch.identity),
                                      leader_id=list(theirs) if theirs else None,
                                      message="replicas hold different records below the HW")
                        break


class OneLeaderPerEpoch(_Base):
    name = "one-leader-per-epoch"

    def __init__(self) -> None:
        super().__init__()
        self.leaders: dict[tuple[str, int, int], int] = {}

    def observe(self, event: Mapping[str, Any]) -> None:
        if event["event"] != names.REPLICA_BECOME_LEADER:
            return
        key = (event["topic"], event["partition"], event["epoch"])
        first = self.leaders.setdefault(key, event["broker"])
        if first != event["broker"]:
            self._violate(None, topic=key[0], partition=key[1], epoch=key[2],
                          brokers=[first, event["broker"]], t_ms=event["t_ms"],
                          message="two leaders in one epoch")
