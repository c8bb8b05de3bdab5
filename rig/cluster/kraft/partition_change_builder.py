"""A partition's registration in the metadata log and the one rule that changes it (Kafka's
PartitionRegistration and PartitionChangeBuilder.build, as in 3.9/4.x): complete a
reassignment, elect, set the ISR, keep the Eligible Leader Replicas (KIP-966) and the last known
leader, bump the epochs.

Pure: `change(...)` takes a registration and the target, returns the new registration or None
(Kafka's empty Optional: the record would change nothing). Both epochs are kept apart: the
leader epoch moves only with the leader (and, before metadata version 3.6, with an ISR shrink,
KAFKA-15021, and when a reassignment takes a replica out of the replica set); the partition
epoch moves with every change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

NO_LEADER = -1
RECOVERED = "RECOVERED"
RECOVERING = "RECOVERING"  # KIP-704: elected unclean; the leader recovers before it may shrink


@dataclass(frozen=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int = 0
    partition_epoch: int = 0
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    leader_recovery_state: str = RECOVERED
    # A reassignment in progress (KIP-455): `replicas` is the target followed by `removing`,
    # `adding` the target's replicas not in the old set (PartitionReassignmentReplicas).
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    # What the ZooKeeper-era model calls a partition's state version (the AlterPartition and
    # the broker's replica compare it: rig.cluster.replica.Replica.zk_version).
    @property
    def version(self) -> int:
        return self.partition_epoch


@dataclass(frozen=True)
class Change:
    """What the controller asks of one partition (PartitionChangeBuilder's setters)."""

    target_isr: tuple[int, ...] | None = None  # None: the ISR as it is
    election: str = "online"  # online | unclean | preferred
    unclean_shutdown: tuple[int, ...] = ()  # setUncleanShutdownReplicas
    recovery_state: str | None = None  # setTargetLeaderRecoveryState
    # setTargetReplicas / setTargetAdding / setTargetRemoving (None: as they are)
    target_replicas: tuple[int, ...] | None = None
    target_adding: tuple[int, ...] | None = None
    target_removing: tuple[int, ...] | None = None


def _valid_new_leader(replica: int, isr: tuple[int, ...], elr: tuple[int, ...],
                      acceptable: Callable[[int], bool]) -> bool:
    # In the ISR, or in the ELR when the ISR is empty; and acceptable (unfenced, not shutting
    # down): PartitionChangeBuilder.isValidNewLeader.
    return (replica in isr or (not isr and replica in elr)) and acceptable(replica)


def elect(part: PartitionRegistration, isr: tuple[int, ...], elr: tuple[int, ...],
          election: str, acceptable: Callable[[int], bool], elr_enabled: bool,
          fenced_last_known_leader: bool = False,
          replicas: tuple[int, ...] | None = None) -> tuple[int, bool]:
    """(new leader, unclean) by PartitionChangeBuilder.electLeader: the current leader if still
    valid, else the first valid replica in assignment order, else (ELR on, ISR and ELR empty)
    the last known leader as unclean, else (unclean election) the first acceptable replica.

    Up to 4.0 canElectLastKnownLeader elects the last known leader even when it is not
    acceptable (fenced): its check only logs; KAFKA-19522 (4.1) makes it refuse
    (`fenced_last_known_leader` is the old behaviour). `replicas` are the builder's
    targetReplicas (after a completed reassignment, the new set), by default the partition's."""
    targets = part.replicas if replicas is None else replicas

    def valid(r: int) -> bool:
        return _valid_new_leader(r, isr, elr, acceptable)

    if election == "preferred":
        if valid(targets[0]):
            return targets[0], False
        if valid(part.leader):
            return part.leader, False
        rest = [r for r in targets[1:] if valid(r)]
    else:
        if valid(part.leader):
            return part.leader, False
        rest = [r for r in targets if valid(r)]
    if rest:
        return rest[0], False
    if (elr_enabled and not isr and not elr and len(part.last_known_elr) == 1
            and (fenced_last_known_leader or acceptable(part.last_known_elr[0]))):
        return part.last_known_elr[0], True  # canElectLastKnownLeader
    if election == "unclean":
        unclean = [r for r in targets if acceptable(r)]
        if unclean:
            return unclean[0], True
    return NO_LEADER, False


def _ordered(members: Iterable[int], replicas: tuple[int, ...]) -> tuple[int, ...]:
    """A set of replicas in assignment order (Kafka's HashSet of small ints iterates ascending;
    rig keeps the assignment's order so that every run lists them the same way)."""
    chosen = set(members)
    return tuple(r for r in replicas if r in chosen)


def reassignment_replicas(current: tuple[int, ...], target: tuple[int, ...],
                          ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """PartitionReassignmentReplicas(currentAssignment, targetAssignment): (replicas, adding,
    removing). removing = current − target and adding = target − current, each a TreeSet
    (ascending); replicas = the target followed by `removing`."""
    removing = tuple(sorted(set(current) - set(target)))
    adding = tuple(sorted(set(target) - set(current)))
    return (*target, *removing), adding, removing


def complete_reassignment(replicas: tuple[int, ...], adding: tuple[int, ...],
                          removing: tuple[int, ...], isr: tuple[int, ...],
                          ) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """PartitionReassignmentReplicas.maybeCompleteReassignment: (replicas, ISR) once the ISR
    without the removing replicas is not empty and holds every remaining replica; None while
    no reassignment is in progress or it cannot complete yet."""
    if not adding and not removing:
        return None
    if removing:
        isr = tuple(r for r in isr if r not in removing)
        replicas = tuple(r for r in replicas if r not in removing)
        if not isr or not replicas:
            return None
    if not set(replicas) <= set(isr):
        return None
    return replicas, isr


def change(part: PartitionRegistration, request: Change, *, acceptable: Callable[[int], bool],
           min_isr: int, elr_enabled: bool, bump_leader_epoch_on_shrink: bool,
           fenced_last_known_leader: bool = False) -> PartitionRegistration | None:
    """PartitionChangeBuilder.build."""
    target_isr = part.isr if request.target_isr is None else request.target_isr
    replicas = part.replicas if request.target_replicas is None else request.target_replicas
    adding = part.adding if request.target_adding is None else request.target_adding
    removing = part.removing if request.target_removing is None else request.target_removing
    # completeReassignmentIfNeeded: the ISR holds every target replica, so the removing ones
    # leave the replica set and the ISR, and the election below runs over the target.
    completed = complete_reassignment(replicas, adding, removing, target_isr)
    if completed is not None:
        replicas, target_isr = completed
        adding = removing = ()
    target_elr = part.elr
    # maybePopulateTargetElr. Kafka computes a target last known ELR here too, but with
    # useLastKnownLeaderInBalancedRecovery (the default) it never reaches the record: the field
    # holds only the last known leader (maybeUpdateLastKnownLeader below).
    if elr_enabled:
        if len(target_isr) >= min_isr:
            target_elr = ()
        else:
            candidates = set(target_elr) | set(part.isr)
            target_elr = _ordered((r for r in candidates if r not in target_isr
                                   and r not in request.unclean_shutdown), part.replicas)
    # tryElection
    record_leader: int | None = None  # None: NO_LEADER_CHANGE
    record_isr: tuple[int, ...] | None = None
    recovery = part.leader_recovery_state
    leader, unclean = elect(part, target_isr, target_elr, request.election, acceptable,
                            elr_enabled, fenced_last_known_leader, replicas)
    if leader != part.leader:
        if leader in target_elr:
            target_isr = (leader,)
            target_elr = tuple(r for r in target_elr if r != leader)
        record_leader = leader
        if unclean:
            record_isr = (leader,)
            recovery = RECOVERING  # KIP-704 (metadata version 3.2+)
    # triggerLeaderEpochBumpForReplicaReassignmentIfNeeded (3.6+; before, part of
    # triggerLeaderEpochBumpIfNeeded): a replica set that loses a member bumps the leader epoch.
    if record_leader is None and not set(part.replicas) <= set(replicas):
        record_leader = part.leader
    # maybeUpdateRecordElr: an unclean election or ELR off clears the ELR
    new_elr = target_elr if record_isr is None and elr_enabled else ()
    # The ISR (it may be empty only with ELR on).
    if record_isr is None and (target_isr or elr_enabled) and target_isr != part.isr:
        record_isr = target_isr
    # triggerLeaderEpochBumpForIsrShrinkIfNeeded (before metadata version 3.6, KAFKA-15021)
    if (bump_leader_epoch_on_shrink and record_leader is None and record_isr is not None
            and not set(part.isr) <= set(record_isr)):
        record_leader = part.leader
    # maybeUpdateLastKnownLeader (useLastKnownLeaderInBalancedRecovery, the default): set when
    # the ISR first becomes empty, cleared once the partition has (or keeps) a leader.
    new_lke = part.last_known_elr
    if elr_enabled:
        if record_isr is not None and not record_isr and (
                len(part.last_known_elr) != 1 or part.last_known_elr[0] != part.leader):
            new_lke = (part.leader,)
        elif ((record_leader is not None and record_leader >= 0)
              or (part.leader != NO_LEADER and record_leader != NO_LEADER)) \
                and part.last_known_elr:
            new_lke = ()
    if request.recovery_state is not None and record_isr is None:
        recovery = request.recovery_state
    if (record_leader is None and record_isr is None and new_elr == part.elr
            and new_lke == part.last_known_elr and recovery == part.leader_recovery_state
            and (replicas, adding, removing) == (part.replicas, part.adding, part.removing)):
        return None  # changeRecordIsNoOp (setAssignmentChanges set nothing either)
    return replace(
        part, replicas=replicas, adding=adding, removing=removing,
        leader=part.leader if record_leader is None else record_leader,
        isr=part.isr if record_isr is None else record_isr,
        elr=new_elr, last_known_elr=new_lke, leader_recovery_state=recovery,
        leader_epoch=part.leader_epoch + (record_leader is not None),
        partition_epoch=part.partition_epoch + 1)
