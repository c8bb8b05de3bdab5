"""The rules that changed across Kafka releases, one `VersionRule` per row: what it switches,
its value from each release that changed it, and Kafka's source for the change
(rig.scenario.profiles makes a release's profile of them; README's version table lists them)."""

from __future__ import annotations

from rig.scenario.kraft_rules import KRAFT_RULES
from rig.scenario.version_rule import VersionRule, release_key

__all__ = ["RULES", "VersionRule", "release_key"]

RULES: tuple[VersionRule, ...] = (
    VersionRule("replica_lag_time_max_ms", "replica.lag.time.max.ms default",
                (("0.8.2", 10_000), ("2.5", 30_000)), "KIP-537"),
    VersionRule("zookeeper_session_timeout_ms", "zookeeper.session.timeout.ms default",
                (("0.8.2", 6_000), ("2.5", 18_000)), "KIP-537"),
    VersionRule("replication", "truncation on becoming follower (default replication strategy)",
                (("0.8.2", "hw-truncation"), ("0.11", "leader-epoch-once"),
                 ("2.0", "leader-epoch")),
                "KIP-101 (before 0.11: to the own high watermark; 0.11: OffsetsForLeaderEpoch "
                "once, KAFKA-6361); KIP-279 (2.0: repeat "
                "with older epochs until both sides know the epoch)"),
    VersionRule("truncation_on_fetch", "a new follower whose log has an epoch fetches at "
                "once with its last fetched epoch (Fetch v12) and truncates by the leader's "
                "diverging epoch, sending no OffsetsForLeaderEpoch (needs "
                "inter.broker.protocol.version 2.7+)",
                (("0.8.2", False), ("2.8", True)),
                "KAFKA-10554 (AbstractFetcherThread.truncateOnFetchResponse, "
                "Partition.readRecords; ApiVersion.isTruncationOnFetchSupported: IBP "
                "2.7-IV1, code first released in 2.8.0)"),
    VersionRule("truncate_epochs_at_log_end", "a follower truncating at or past its log end "
                "still drops the epochs that start there (one it recorded as leader and never "
                "wrote)", (("0.8.2", False), ("2.7", True)),
                "KAFKA-10706 (Log.truncateTo; released in 2.6.1 and 2.7.0)"),
    VersionRule("out_of_range_halts", "a follower whose fetch is out of range and finds the "
                "leader's log end below its own, unclean.leader.election.enable off, stops its "
                "broker (else it truncates to the leader's end)",
                (("0.8.2", True), ("2.1", False)),
                "KAFKA-7414 (AbstractFetcherThread.fetchOffsetAndTruncate: an out-of-range "
                "error is never fatal for a follower)"),
    VersionRule("out_of_range_restarts_log", "a follower whose fetch is out of range and finds "
                "the leader's log end at or past its own starts its log again at the leader's "
                "log start (else only a log ending below that start does)",
                (("0.8.2", True), ("0.10", False)),
                "KAFKA-2143 (ReplicaFetcherThread.handleOffsetOutOfRange: 0.8.2 "
                "truncateFullyAndStartAt(leader's start) whenever the leader is not behind; "
                "from 0.9.0.1 it fetches from max(leader's start, own end))"),
    VersionRule("timestamp_based_segments", "segment.ms and retention.ms go by the records' "
                "timestamps (before, or in message format 0, by when this broker made and last "
                "wrote the segment)", (("0.8.2", False), ("0.10.1", True)),
                "KIP-33 (LogSegment.timeWaitedForRoll, largestTimestamp)"),
    VersionRule("retention_below_high_watermark", "retention deletes only segments wholly "
                "below the high watermark (before, any whose predicate holds)",
                (("0.8.2", False), ("0.11", True)),
                "KAFKA-5634 (Log.deletableSegments; released in 0.11.0.1: rig's 0.11 profile, "
                "the first with KIP-107's log start offset, takes it)"),
    VersionRule("retention_log_start_when_compacted", "retention deletes a compacted log's "
                "segments below its log start (a follower's, moved up to the leader's)",
                (("0.8.2", False), ("2.1", True)),
                "KAFKA-7400 (Log.deleteOldSegments: deleteLogStartOffsetBreachedSegments "
                "whatever the cleanup policy)"),
    VersionRule("retention_log_start_first", "retention's log-start pass runs before the "
                "retention.bytes and retention.ms passes (before, after them)",
                (("0.8.2", False), ("3.0", True)),
                "KAFKA-12177 (Log.deleteOldSegments)"),
    VersionRule("isr", "ISR expiry (default ISR strategy): is a follower at the leader's log "
                "end that has not fetched for the lag time out of sync?",
                (("0.8.2", "lag-messages"), ("0.9", "lag-time-only"), ("2.1", "lag-time")),
                "Partition.getOutOfSyncReplicas: 0.8.2 stuck (no fetch for the lag time) or "
                "slow (replica.lag.max.messages behind), KIP-16 dropped the messages rule in "
                "0.9; KAFKA-7152 (0.9–2.0 the lag time alone; 2.1+ "
                "only a follower behind the leader's LEO)"),
    VersionRule("isr_kafka_4485", "a fetch up to the leader's LEO of the previous fetch "
                "counts as caught up, and the isr-expiration task runs every lag/2 (before: "
                "only a fetch at the LEO, every lag)", (("0.8.2", False), ("0.10.2", True)),
                "KAFKA-4485 (Replica.updateLogReadResult, ReplicaManager.startup)"),
    VersionRule("unclean_leader_election_enable", "unclean.leader.election.enable default",
                (("0.8.2", True), ("0.11", False)),
                "KAFKA-1028 (0.8.2: the setting, default true); KIP-106 (0.11: default false)"),
    VersionRule("message_format", "message format (magic) the brokers write and a follower "
                "fetches: 0 and 1 are message sets (LegacyRecord), 2 record batches",
                (("0.8.2", 0), ("0.10", 1), ("0.11", 2)),
                "KIP-32 (0.10: magic 1, timestamps); KIP-98 (0.11: record batch v2)"),
    VersionRule("epoch_end_before_first_known", "the leader's answer for an epoch older than "
                "every epoch it knows",
                (("0.8.2", "undefined"), ("2.0", "first-start")),
                "LeaderEpochFileCache.endOffsetFor (1.x: UNDEFINED, the follower falls back to "
                "its HW; 2.0, KIP-279: the start of the first known epoch)"),
    VersionRule("epoch_start_at_election", "a new leader records its epoch's start when elected "
                "(before: at its first append)",
                (("0.8.2", False), ("2.1", True)), "KAFKA-7415"),
    VersionRule("fetch_leader_epoch_checked", "a broker answers a follower's fetch "
                "FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH for a partition whose leader epoch "
                "it knows newer or not yet (Fetch v9+, IBP 2.1+)",
                (("0.8.2", False), ("2.1", True)),
                "KIP-320 (Partition.checkCurrentLeaderEpoch; AbstractFetcherThread: fenced, "
                "the partition waits for a LeaderAndIsr; unknown, it backs off)"),
    VersionRule("follower_refetch_on_new_epoch", "a follower told of a new leader epoch with "
                "the same leader restarts fetching the partition (truncating first): never, "
                "only for an epoch more than one ahead, or for any new epoch",
                (("0.8.2", "never"), ("2.0", "beyond-next"), ("2.1", "any")),
                "Partition.makeFollower's answer (1.1: the leader did not change; 2.0: nor did "
                "the epoch move by more than one; 2.1, KIP-320: the epoch did not change), "
                "ReplicaManager.makeFollowers"),
    VersionRule("consumer_leader_epoch", "a consumer's ListOffsets (v4+) and fetches (v9+) "
                "carry the leader epoch its metadata names: a leader at another epoch refuses "
                "them (FENCED_ / UNKNOWN_LEADER_EPOCH); the consumer asks for metadata (a "
                "ListOffsets tries again after retry.backoff.ms; a fetch refused at an unknown "
                "epoch is only logged and sent again); before, it sends none (-1: a 2.1 or 2.2 "
                "consumer's Fetch v10) and is never refused for one",
                (("0.8.2", False), ("2.3", True)),
                "KIP-320, KAFKA-7747 (Fetcher.groupListOffsetRequests, Fetcher"
                ".prepareFetchRequests: position.currentLeader.epoch, where 2.1 and 2.2 send "
                "Optional.empty(); Partition.localLogWithEpochOrException)"),
    VersionRule("offset_not_available", "a leader whose HW is still below the start of its "
                "leader epoch answers a client's ListOffsets for the latest offset "
                "OFFSET_NOT_AVAILABLE (the consumer tries again after retry.backoff.ms), so no "
                "reset goes below what the old leader had made readable",
                (("0.8.2", False), ("2.2", True)),
                "KIP-207, KAFKA-2334 (Partition.fetchOffsetForTimestamp)"),
    VersionRule("isr_rejoin_needs_epoch_start", "a follower rejoins the ISR only past the start "
                "of the leader's epoch", (("0.8.2", False), ("2.1", True)),
                "Partition.isFollowerInSync (leaderEpochStartOffsetOpt, 2.1)"),
    VersionRule("failed_read_resets_follower", "a follower fetch the leader answers with an "
                "error (out of range, a fenced or unknown leader epoch) makes the follower's "
                "log end offset unknown to the leader until its next good fetch",
                (("0.8.2", True), ("2.4", False)),
                "KAFKA-8400 (before 2.4 ReplicaManager.updateFollowerLogReadResults passed a "
                "failed read, offset -1, to Replica.updateLogReadResult; 2.4's "
                "updateFollowerFetchState skips it)"),
    VersionRule("hw_on_follower_leo_change", "a follower's fetch makes the leader recompute "
                "a partition's high watermark only when the fetch moved that follower's log end "
                "offset (before: for every partition the fetch read, so a HW a lagging replica "
                "held can move on any follower fetch)", (("0.8.2", False), ("2.4", True)),
                "KAFKA-8841 (2.4's Partition.updateFollowerFetchState calls "
                "maybeIncrementLeaderHW only when prevFollowerEndOffset differs; before, "
                "maybeExpandIsr called it for every partition of every follower fetch)"),
    VersionRule("isr_update", "how a leader changes its ISR in ZooKeeper mode "
                "(inter.broker.protocol.version)",
                (("0.8.2", "zookeeper-write"), ("2.7", "alter-isr-every-50ms"),
                 ("2.8", "alter-isr")),
                "KIP-497 (before 2.7: the leader writes /state and announces it through "
                "/isr_change_notification; from IBP 2.7 it sends AlterIsr to the controller, "
                "which writes ZooKeeper and sends UpdateMetadata, and the HW and acks=all go "
                "by the maximal ISR while a change is pending: Partition.isrState, "
                "KafkaController.processAlterIsr); AlterIsrManager (2.7: queued changes go "
                "out every 50 ms; 2.8, DefaultAlterIsrManager: at once, one request in flight "
                "per broker)"),
    VersionRule("alter_isr_takes_same_version", "a leader takes the controller's AlterIsr "
                "answer whose version equals its own (the answer for an ISR already in place; "
                "before, it stays pending until the next LeaderAndIsr)",
                (("0.8.2", False), ("3.0", True)),
                "KAFKA-12751 (Partition.handleAlterIsrResponse: 2.7.0–2.8.0 ignore a version "
                "<= their own; 2.7.2, 2.8.1 and 3.0.0 take an equal one)"),
    VersionRule("hw_on_alter_isr_response", "a leader recomputes its HW when the controller "
                "confirms an ISR change it proposed (AlterIsr/AlterPartition)",
                (("0.8.2", False), ("3.1", True)),
                "KAFKA-13091 (Partition.handleAlterIsrResponse; before, at the next append "
                "or follower fetch)"),
    VersionRule("alter_partition_ineligible", "the ZooKeeper controller refuses an ISR change "
                "that adds a replica not live or shutting down (INELIGIBLE_REPLICA), and a "
                "leader does not propose a follower its metadata cache does not list alive",
                (("0.8.2", False), ("3.3", True)),
                "KIP-841 (KafkaController.tryProcessAlterPartition; the leader goes back to "
                "its committed ISR: Partition.handleAlterPartitionError; KAFKA-13916: "
                "Partition.isReplicaIsrEligible, ZkMetadataCache.hasAliveBroker)"),
    VersionRule("election_order", "a clean election picks the first live replica of the ISR in",
                (("0.8.2", "isr-order"), ("1.1", "assignment-order")),
                "OfflinePartitionLeaderSelector (liveBrokersInIsr.head); 1.1's controller "
                "rewrite (KAFKA-5642): PartitionStateMachine's offline election walks the "
                "assignment"),
    VersionRule("controller_detects_bounce", "the controller treats a broker registered again "
                "since it last read /brokers/ids (a newer broker epoch) as failed, then started "
                "(before: the bounce goes unseen)", (("0.8.2", False), ("2.2", True)),
                "KIP-380 (KafkaController.processBrokerChange: bouncedBrokerIds)"),
    VersionRule("registration_waits_for_old_session", "a broker restarted while its crashed "
                "process's ZooKeeper session still holds /brokers/ids/<id> sleeps a session "
                "timeout and registers again (else its startup fails and it exits)",
                (("0.8.2", True), ("0.9", False)),
                "ZkUtils.createEphemeralPathExpectConflictHandleZKBug (0.8.2); "
                "ZKCheckedEphemeral (0.9), KafkaZkClient.CheckedEphemeral (1.1+): NODEEXISTS"),
    VersionRule("rack_aware_assignment", "the consumer's range assignor gives members "
                "partitions with a replica in their client.rack",
                (("0.8.2", False), ("3.5", True)),
                "KIP-881 (RangeAssignor, AbstractPartitionAssignor.useRackAwareAssignment)"),
    VersionRule("client_leader_discovery", "a client takes the leader a refusal names "
                "(NOT_LEADER_OR_FOLLOWER in Produce v10+, also FENCED_LEADER_EPOCH in Fetch "
                "v16+): a producer retries to it at once, a consumer fetches from it; a retried "
                "batch skips its backoff once its partition has a newer leader epoch",
                (("0.8.2", False), ("3.7", True)),
                "KIP-951 (KafkaApis.getCurrentLeader, Sender.completeBatch, AbstractFetch"
                ".handleFetchSuccess, Metadata.updatePartitionLeadership); KAFKA-15415 "
                "(RecordAccumulator.shouldBackoff)"),
    VersionRule("metadata_keeps_newer_epoch", "a client's metadata answer naming a "
                "partition at a leader epoch older than one the client has seen (an earlier "
                "answer, or a refusal's current leader: KIP-951) leaves that partition as the "
                "client knew it (before: every answer replaced its leader and epoch)",
                (("0.8.2", False), ("2.3", True)),
                "KAFKA-7738, 2.2 (Metadata.updateLastSeenEpoch: newEpoch >= oldEpoch, else "
                "the cached PartitionInfo); KAFKA-9212 (2.3.2, 2.4.0) trusts only Metadata v9+ "
                "answers' epochs, which 2.4+ clients get (the 2.3 profile is 2.3.0's)"),
    VersionRule("retry_backoff_max_ms", "retry.backoff.max.ms: a producer's retry waits "
                "retry.backoff.ms × 2^(attempt − 1) up to it, ±20 % drawn at each look; a "
                "client's metadata requests (a producer's, a consumer's) wait as long after "
                "failures in a row, and after answers in a row that named no newer leader "
                "epoch (before: retry.backoff.ms)",
                (("0.8.2", 100), ("3.7", 1000)),
                "KIP-580, KAFKA-9800 (RecordAccumulator's and Metadata's ExponentialBackoff, "
                "Metadata.timeToAllowUpdate: equivalentResponseCount)"),
    VersionRule("metadata_leader_not_available_asks", "a producer's metadata answer naming a "
                "partition of its topic without a leader asks for the next update itself, "
                "retry.backoff.ms after it (before: only a batch for that partition does)",
                (("0.8.2", False), ("2.3", True)),
                "KAFKA-7831 (Metadata.handleMetadataResponse: InvalidMetadataException → "
                "requestUpdate)"),
    VersionRule("metadata_disconnect_fails_update", "a client's broken connection fails a "
                "metadata request open to that broker, and an update due but not yet sent: "
                "the next waits retry.backoff.ms (before: the lost request is sent again at "
                "once; every release asks for an update on a disconnect)",
                (("0.8.2", False), ("2.5", True)),
                "KAFKA-8933 (NetworkClient.DefaultMetadataUpdater.handleServerDisconnect; "
                "before, handleDisconnection and handleDisconnections' requestUpdate)"),
    VersionRule("hw_holds_below_min_isr", "the HW does not advance while the ISR is smaller than "
                "min.insync.replicas", (("0.8.2", False), ("3.7", True)), "KAFKA-15583"),
    VersionRule("effective_min_isr", "acks=all and the HW count min.insync.replicas as at most "
                "the replication factor", (("0.8.2", False), ("3.7", True)),
                "KAFKA-15583 (Partition.effectiveMinIsr: min(min.insync.replicas, replicas))"),
    VersionRule("controller", "default controller (strategies.controller)",
                (("0.8.2", "zookeeper"), ("4.0", "kraft")),
                "KIP-500; KIP-833 (ZooKeeper removed in 4.0)"),
    VersionRule("controllers", "controllers a variant may choose",
                (("0.8.2", "zookeeper"), ("3.3", "zookeeper, kraft"), ("4.0", "kraft")),
                "KIP-833 (KRaft production-ready in 3.3; the only mode from 4.0)"),
    VersionRule("reconnect_backoff_max_ms", "reconnect.backoff.max.ms: a producer waits "
                "reconnect.backoff.ms (50 ms) × 2^failures up to it, ±20 %, to connect again",
                (("0.8.2", 50), ("0.11", 1000)), "KIP-144 (ClusterConnectionStates)"),
    VersionRule("connection_setup_timeout_ms", "socket.connection.setup.timeout.ms: a "
                "connection to a machine that lost power fails after it, ±20 % (none before: "
                "the kernel's SYN retries end at 127 s)", (("0.8.2", None), ("2.7", 10_000)),
                "KIP-601, KAFKA-9893 (NetworkClient.handleTimedOutConnections)"),
    VersionRule("connection_setup_timeout_max_ms", "socket.connection.setup.timeout.max.ms: "
                "the setup timeout doubles with each failed attempt in a row, up to it",
                (("0.8.2", None), ("2.7", 127_000), ("2.8", 30_000)),
                "KIP-601; apache/kafka#10306 (2.8)"),
    *KRAFT_RULES,
)
