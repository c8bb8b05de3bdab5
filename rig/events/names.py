"""Every event name rig writes, in one place.

An event is one JSON object per line with at least ``t_ms`` (simulated milliseconds), ``seq``
(the run's total order), ``event`` (one of the names below) and ``variant``; then the ids involved
and the details. Field lists per event are documented next to each name and are a contract for
the analysis and for users' own tools.
"""

from __future__ import annotations

from typing import Final

# Run lifecycle --------------------------------------------------------------------------------
RUN_START: Final = "run.start"  # scenario, seed, duration_ms, fetch_version, strategies (every
#   kind but the controller, which its own events show)
RUN_END: Final = "run.end"  # events (count written before this one)

# Cluster set-up ---------------------------------------------------------------------------------
BROKER_START: Final = "broker.start"  # broker, rack
# topic.created: topic, partitions, replication_factor, placement, min_insync_replicas (as its
#   leaders apply it: from 3.7 at most the replication factor, Partition.effectiveMinIsr)
TOPIC_CREATED: Final = "topic.created"
PARTITION_ASSIGNED: Final = "partition.assigned"  # topic, partition, replicas, leader
# client.rack: client (its node name), role ("producer" | "consumer"), rack — a client with a
#   client.rack, when it is built (clients without one are not logged and have no zone)
CLIENT_RACK: Final = "client.rack"
FETCHER_START: Final = "fetcher.start"  # broker (follower), leader, fetcher, client, partitions
# fetcher.fenced: broker (follower), leader, topic, partition, epoch (the follower's), fetcher —
#   2.1+ (KIP-320): its fetch was answered FENCED_LEADER_EPOCH (the leader knows a newer epoch);
#   the partition leaves the fetcher until a LeaderAndIsr brings the new epoch.
FETCHER_FENCED: Final = "fetcher.fenced"

# Fetch protocol ---------------------------------------------------------------------------------
# fetch.request: role ("follower" | "consumer"), client, replica_id, broker (the one served),
#   source (the broker or client sending), fetcher, version, session_id, session_epoch,
#   full (bool), partitions, forgotten, body_bytes, header_bytes, wire_bytes, and
#   fetch_offsets: [[topic, partition, fetch_offset], ...] for the partitions whose fetch state
#   is new since the client's previous request (all of them after a reset; in an incremental
#   fetch, the ones it lists); absent when none is (an idle round, or what fetch.idle stands for)
FETCH_REQUEST: Final = "fetch.request"
# fetch.response: the same ids, plus session_id, error_code, partitions (listed),
#   records_bytes, waited_ms (time held in purgatory), body_bytes, header_bytes, wire_bytes, and
#   errors: [[topic, partition, error_code], ...] for the partitions answered with an error
#   (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, OFFSET_OUT_OF_RANGE, ...), sorted; absent
#   when none was
FETCH_RESPONSE: Final = "fetch.response"
# fetch.idle (only with `events: fetch-aggregated`): a run of idle rounds of one fetch client,
#   advanced in closed form, standing for `requests` fetch.request and `responses` fetch.response
#   events. The i-th request was sent at first_request_us + i·period_us and the i-th response at
#   first_response_us + i·period_us (integer simulated microseconds). Fields: the ids of
#   fetch.request (role, client, replica_id, broker, source, fetcher, version, session_id, full),
#   first_session_epoch (the i-th request's epoch is i epochs later; -1 when sessionless),
#   period_us, requests, first_request_us, request_partitions, request_body_bytes,
#   request_header_bytes, request_wire_bytes, responses, first_response_us, response_partitions,
#   error_code (0), records_bytes (0), waited_ms, response_body_bytes, response_header_bytes,
#   response_wire_bytes. Either count may be 0. t_ms is when the run ended (was logged).
FETCH_IDLE: Final = "fetch.idle"

# Fetch sessions (KIP-227) -----------------------------------------------------------------------
SESSION_CREATED: Final = "session.created"  # broker, client, session_id, partitions, privileged
SESSION_EVICTED: Final = "session.evicted"  # broker, session_id, by_client
SESSION_ERROR: Final = "session.error"  # broker, client, session_id, session_epoch, error_code
# session.cache: broker, sessions, partitions (cached over all its sessions), slots; sampled once a
#   second when either changed, and when a crash empties the cache (Kafka's
#   NumIncrementalFetchSessions and NumIncrementalFetchPartitionsCached gauges)
SESSION_CACHE: Final = "session.cache"

# Failures and recovery (used from issue 3 on) ---------------------------------------------------
PRODUCE_ACK: Final = "produce.ack"  # producer, topic, partition, offset, records, id, acks
ISR_SHRINK: Final = "isr.shrink"
ISR_EXPAND: Final = "isr.expand"
LEADER_ELECTED: Final = "leader.elected"
REPLICA_TRUNCATE: Final = "replica.truncate"
# replica.truncation_stuck: broker (follower), topic, partition, leader, epoch (the one it asks
#   about again) — before 2.7 a KIP-279 walk-back step that truncates at the log end keeps that
#   epoch in the cache (Log.truncateTo's early return), so the follower asks the leader the
#   same question for ever and never fetches the partition (KAFKA-10706, Kafka's own liveness
#   defect); logged once per partition a fetcher follows
REPLICA_TRUNCATION_STUCK: Final = "replica.truncation_stuck"
# replica.truncate_fully: broker (follower), topic, partition, leader, log_start_offset and
#   log_end_offset (its log's before), to_offset (the leader's log start, where its log starts
#   again, empty), records (deleted) — an out-of-range fetch below the leader's log start (a
#   replica down while retention deleted what it would fetch next, or a new one), or before
#   0.9.0.1 any out-of-range fetch with the leader not behind (KAFKA-2143):
#   truncateFullyAndStartAt. Not a truncation of records the leader still has, save KAFKA-2143's
REPLICA_TRUNCATE_FULLY: Final = "replica.truncate_fully"
BROKER_CRASH: Final = "broker.crash"
BROKER_RESTART: Final = "broker.restart"
# broker.startup_failed: broker, incarnation, reason ("node-exists"), owner — ZooKeeper mode,
#   0.9+: a restarted process found /brokers/ids/<broker> still held by the session of the
#   process before it (owner: that process's incarnation), which ZooKeeper keeps until the
#   session times out after a crash: KafkaServer.startup fails ("A broker is already registered
#   on the path …"; KafkaZkClient.CheckedEphemeral's NODEEXISTS from 1.1) and the process exits
BROKER_STARTUP_FAILED: Final = "broker.startup_failed"
# zk.registration_retry: broker, incarnation, owner, retry_ms — the same refusal on 0.8.2: the
#   process sleeps zookeeper.session.timeout.ms and creates the node again
#   (ZkUtils.createEphemeralPathExpectConflictHandleZKBug), until the old session has expired
ZK_REGISTRATION_RETRY: Final = "zk.registration_retry"
# broker.halt: broker, topic, partition, leader, leader_log_end_offset, log_end_offset — a
#   follower's fetch found the leader's log end below its own and unclean.leader.election.enable
#   is off for the topic: the broker stops rather than truncate acknowledged data away
#   (ReplicaFetcherThread.handleOffsetOutOfRange, "Halting because log truncation is not
#   allowed", 0.8.2; "Exiting because …" later); a broker.crash follows at the same instant
BROKER_HALT: Final = "broker.halt"
# broker.shutdown: broker, controlled (bool: the controller let it go, leaderships moved; False:
#   it gave up asking) — a clean stop after a controlled-shutdown fault: logs flushed, its
#   ZooKeeper session closed (ZooKeeper mode) or its registration left fenced (KRaft)
BROKER_SHUTDOWN: Final = "broker.shutdown"
# controlled_shutdown.request: broker, controller (None: none known), attempt (1, 2, …)
CONTROLLED_SHUTDOWN_REQUEST: Final = "controlled_shutdown.request"
# controlled_shutdown.reply: broker, controller, attempt, remaining (partitions it still leads;
#   None on an error), error (None, "refused" or "no-answer")
CONTROLLED_SHUTDOWN_REPLY: Final = "controlled_shutdown.reply"
# controller.elected: ZooKeeper: broker, epoch (the controller epoch); KRaft: node (the active
#   controller's node), epoch and quorum_epoch (the Raft leader epoch of the metadata quorum);
#   with cluster.controllers, after t=0 also votes (the voters that granted it) and leaderless_ms
#   (since the previous active controller stopped; 0 if it had not)
CONTROLLER_ELECTED: Final = "controller.elected"
# controller.bounce_unseen: broker, controller, epoch (the broker epoch it registered with) —
#   before 2.2 (KIP-380) a broker that went and registered again between two reads of
#   /brokers/ids is the same id to the controller, which does nothing: the new process hears of
#   its partitions only when something else changes (KAFKA-1120, Kafka's own liveness defect)
CONTROLLER_BOUNCE_UNSEEN: Final = "controller.bounce_unseen"
# KRaft's quorum (cluster.controllers; docs/kafka.md §12):
# controller.crash: node, quorum_epoch, active (bool: it was the active controller)
CONTROLLER_CRASH: Final = "controller.crash"
# controller.restart: node, quorum_epoch, state (its Raft state on start: resigned, follower, …)
CONTROLLER_RESTART: Final = "controller.restart"
# controller.renounced: node, quorum_epoch, reason ("crash" | "check-quorum" | "higher-epoch"),
#   was_active — a Raft leader stopped leading (QuorumController.renounce)
CONTROLLER_RENOUNCED: Final = "controller.renounced"
# quorum.election: node, quorum_epoch (the epoch it stands for), pre_vote (bool: KIP-996's
#   pre-vote round, which bumps no epoch), last_epoch, end_offset (its log's)
QUORUM_ELECTION: Final = "quorum.election"
# broker.metadata_resumed: broker, controller (node), quorum_epoch, stale_ms — a broker's metadata
#   fetch is answered by a new active controller; stale_ms since its last answered fetch (what
#   it kept meanwhile was its last metadata)
BROKER_METADATA_RESUMED: Final = "broker.metadata_resumed"
PRODUCE_REQUEST: Final = "produce.request"  # producer, broker, partitions, records, bytes, acks
PRODUCE_ERROR: Final = "produce.error"  # producer, topic, partition, error_code, retrying
BROKER_POWER_LOSS: Final = "broker.power_loss"  # broker, records_lost
ZK_SESSION_EXPIRED: Final = "zk.session_expired"  # broker, reason
PARTITION_OFFLINE: Final = "partition.offline"  # topic, partition, isr, reason
REPLICA_BECOME_LEADER: Final = "replica.become_leader"  # broker, topic, partition, epoch, isr
REPLICA_BECOME_FOLLOWER: Final = "replica.become_follower"  # broker, topic, partition, leader
# replica.epoch_changed: broker, topic, partition, role (leader / follower), leader, epoch,
#   previous_epoch, isr (as leader), leo, hw — a replica keeps its role and its leader at a new
#   leader epoch (a re-elected leader; a follower whose leader is re-elected), which Kafka logs
#   as it does a change of leader ("... starts at leader epoch N ... Previous leader epoch was
#   M": Partition.makeLeader / makeFollower). From then on it answers (as leader) and sends (as
#   follower) fetches at the new epoch.
REPLICA_EPOCH_CHANGED: Final = "replica.epoch_changed"
# hw.advance: broker, topic, partition, hw (the new high watermark), leader (bool: the leader's
#   HW, or a follower's learned from a fetch response) — only when a replica's HW goes up
HW_ADVANCE: Final = "hw.advance"
FAULT_INJECT: Final = "fault.inject"  # fault (index), kind, targets
# fault.heal: fault (index), kind, targets — after its heal_after / restart_after, or when the run
#   ends; never for a fault that is not undone (reassign, alter-config without heal_after,
#   zk-session-expiry, controller-failover: rig.faults.kinds.Fault.undone)
FAULT_HEAL: Final = "fault.heal"
CHECK_VIOLATION: Final = "check.violation"  # check, and what it found
RECORD_LOST: Final = "record.lost"  # an acknowledged batch absent at the end: topic, partition,
#   id, offset, records, acks, acked_at_ms, leader
CONSUMER_LAG: Final = "consumer.lag"  # group, lag (records below the HW), consumed
# consumer.read: group, client, topic, partition, broker (the leader read from), batches: a list
#   of [base_offset, end_offset, producer, sequence] a consumer accepted from one fetch response
CONSUMER_READ: Final = "consumer.read"
# consumer.offset_reset: group, client, topic, partition, broker (the leader that answered),
#   offset (the position before), to (the position after), reason ("out-of-range": the fetch
#   offset was past the leader's log end, auto.offset.reset applied; "truncation": 2.3+ position
#   validation found the log it read truncated below its position, KIP-320; "unknown-epoch": the
#   leader knows no end for the position's epoch, auto.offset.reset applied), policy
#   (auto.offset.reset: "latest" | "earliest")
CONSUMER_OFFSET_RESET: Final = "consumer.offset_reset"
# consumer.skipped: group, topic, partition, offset (the first batch skipped), end_offset (where
#   the last one ends), records (offsets the skipped batches span), batches, leader — found at
#   the end (the consumers-skip-nothing check): committed batches between the first batch the
#   group read of the partition and the end of its last read that it never read
CONSUMER_SKIPPED: Final = "consumer.skipped"
# net.traffic: src, dst (node names as strings: a broker id, "zk", a client), kind ("produce" |
#   "control"), bytes, messages — what the wire carried between two nodes over the whole run,
#   fetches left out (their events log each one); logged once per (src, dst, kind) at the end
NET_TRAFFIC: Final = "net.traffic"
RUN_QUIESCED: Final = "run.quiesced"  # settled (bool), waited_ms
# ISR change propagation (ZooKeeper era, docs/kafka.md §10):
ZK_PARTITION_STATE: Final = "zk.partition_state"  # topic, partition, leader, epoch, isr,
#   version, writer (leader | controller): a partition's /state znode as written (a leader's
#   own ISR change is written by the leader before IBP 2.7, by the controller for it from 2.7:
#   AlterIsr, KIP-497)
# zk.partition_assignment: topic, partition, replicas, adding, removing — the controller wrote
#   the partition's assignment into /brokers/topics/<topic> (a reassignment, KIP-455: its start,
#   the target followed by the origin's others with adding and removing set, and its end, the
#   target with neither; KafkaController.updateReplicaAssignmentForPartition)
ZK_PARTITION_ASSIGNMENT: Final = "zk.partition_assignment"
ISR_CHANGE_NOTIFICATION: Final = "isr.change_notification"  # broker, notification, partitions
ISR_CHANGE_PROPAGATED: Final = "isr.change_propagated"  # broker (controller), notifications,
#   partitions: the controller read the notifications and sent UpdateMetadata to every broker
# KRaft (docs/kafka.md §12) ---------------------------------------------------------------------
# broker.registered: broker, broker_epoch (the offset of its RegisterBrokerRecord), incarnation,
#   unclean_shutdown (bool: its previous epoch was not the one registered, KIP-966)
BROKER_REGISTERED: Final = "broker.registered"
# broker.fenced: broker, broker_epoch, reason ("session-timeout" | "controlled-shutdown" |
#   "requested"), last_contact_ms
BROKER_FENCED: Final = "broker.fenced"
# broker.unfenced: broker, broker_epoch, metadata_offset (the offset it had applied)
BROKER_UNFENCED: Final = "broker.unfenced"
# partition.change: topic, partition, leader, isr, elr, last_known_elr, leader_epoch,
#   partition_epoch, leader_recovery_state (RECOVERED | RECOVERING), replicas, adding, removing
#   (a reassignment in progress: the target's new replicas, the old ones leaving), offset (in
#   the metadata log), reason (broker-fenced | broker-unfenced | controlled-shutdown |
#   unclean-shutdown | alter-partition | reassignment | min-isr-change): a
#   PartitionChangeRecord the active controller appended
PARTITION_CHANGE: Final = "partition.change"
# replica.created: broker, topic, partition, replicas — a reassignment made the broker a replica
#   it does not hold (KRaft: its metadata names it; ZooKeeper: a LeaderAndIsr does): an empty
#   log, fetching from offset 0
REPLICA_CREATED: Final = "replica.created"
# replica.deleted: broker, topic, partition, replicas, log_end_offset (of the log deleted) — its
#   metadata no longer names it a replica (TopicDelta.localChanges deletes), or a ZooKeeper
#   controller's StopReplica with delete = true removed it: stopped, log gone
REPLICA_DELETED: Final = "replica.deleted"
# reassignment.rejected: topic, partition, replicas (the target), error_code — a reassign fault
#   no controller took (NOT_CONTROLLER 41: none active; ZooKeeper mode also
#   INVALID_REPLICA_ASSIGNMENT 39, an added replica whose broker is not alive)
REASSIGNMENT_REJECTED: Final = "reassignment.rejected"
# alter_partition.rejected: broker (the leader), topic, partition, error_code, error (Kafka's
#   name: INELIGIBLE_REPLICA 107, FENCED_LEADER_EPOCH 74, INVALID_UPDATE_VERSION 95, …), isr
#   (proposed), leader_epoch, partition_epoch (both as the leader sent them; in ZooKeeper mode,
#   IBP 2.7+, the AlterIsr answer and partition_epoch the /state version); ignored (KRaft, only
#   when true: the answer came after the partition moved on, to a new leader epoch or deleted,
#   and Partition ignores it — NEW_LEADER_ELECTED 108 races the record it reports)
ALTER_PARTITION_REJECTED: Final = "alter_partition.rejected"
# config.altered: topic, config ("min.insync.replicas"), value (as set; None: an alteration
#   undone), scope ("topic" | "cluster": the cluster-wide default), min_insync_replicas (what the
#   topic's leaders now apply) — an alter-config fault, one event per topic it changes
CONFIG_ALTERED: Final = "config.altered"
METADATA_UPDATED: Final = "metadata.updated"  # broker, topic, partition, leader, isr: a broker's
#   metadata cache changed for a partition (UpdateMetadata)

# Storage, compaction and consumer offsets (issue 5) -------------------------------------------
# log.sample: broker, topic, partition, leader (bool), size_bytes, segments, index_bytes,
#   time_index_bytes, log_start_offset, log_end_offset, records, dirty_ratio, lookups,
#   lookup_bytes (sum), lookup_min, lookup_max, lookup_samples (every 16th lookup's bytes
#   scanned) — every 2 s for each compacted log that changed or was read
LOG_SAMPLE: Final = "log.sample"
# broker.storage: broker, size_bytes (every log it holds), logs, changed (logs written or read
#   since the last one), lookups, lookup_bytes, lookup_min, lookup_max, lookup_samples — every
#   2 s while any of its logs changed
BROKER_STORAGE: Final = "broker.storage"
# log.retention: broker, topic, partition, segments_deleted, records_deleted, log_start_offset,
#   reason ("retention.ms" | "retention.bytes" | "log_start_offset": below a log start moved up
#   to the leader's) — one per pass of a check that deleted (rig.cluster.retention)
LOG_RETENTION: Final = "log.retention"
# log.start_increment: broker (follower), topic, partition, leader, from_offset, log_start_offset
#   — a follower's log start moved up to the one the leader's fetch response carries (Fetch v5+,
#   KIP-107: ReplicaFetcherThread.processPartitionData → maybeIncrementLogStartOffset, reason
#   LeaderOffsetIncremented); the segments below it go at its next retention pass
LOG_START_INCREMENT: Final = "log.start_increment"
# cleaner.pass: broker, thread, topic, partition, keys_mapped, map_capacity, map_full (a partial
#   pass), records_read, records_removed, tombstones_removed, bytes_read, bytes_written,
#   duration_ms, dirty_ratio (at selection), first_dirty_offset, end_offset, segments_before,
#   segments_after, log_bytes_before, log_bytes_after, aborted (bool)
CLEANER_PASS: Final = "cleaner.pass"
# offsets.commit: group, member, coordinator, offsets_partition, partitions, error_code
OFFSETS_COMMIT: Final = "offsets.commit"
# coordinator.found: group, member, coordinator, offsets_partition, previous (−1: none)
COORDINATOR_FOUND: Final = "coordinator.found"
# consumer.resume: group, member, topic, partition, committed, position, duplicates (records
#   read again because the position goes back to the committed offset)
CONSUMER_RESUME: Final = "consumer.resume"

ALL: Final = frozenset(
    value for name, value in dict(globals()).items() if name.isupper() and isinstance(value, str)
)
