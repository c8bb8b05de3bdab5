"""The versions sent for the APIs rig sizes exactly, besides a follower's Fetch
(rig.scenario.profiles): a producer's Produce; a producer's and a consumer's Metadata; a
consumer's FindCoordinator, OffsetCommit, OffsetFetch, ListOffsets and OffsetsForLeaderEpoch; a
follower's ListOffsets and OffsetsForLeaderEpoch; the ZooKeeper-era controller's LeaderAndIsr,
UpdateMetadata and StopReplica; a broker's ControlledShutdown and AlterIsr / AlterPartition; and
a KRaft broker's BrokerRegistration and BrokerHeartbeat.

Client and brokers are the same release in rig, so ApiVersions (KIP-35) settles on a client's
newest version: its table gives, per release that raised it, that newest version, read from the
release's own schema list. A follower picks its versions by inter.broker.protocol.version, as
its Fetch version.
"""

from __future__ import annotations

from rig.scenario.version_rules import release_key

# (first release, newest Produce version), newest first. Sources, at each release's tag:
# 0.8.2.2, 0.9.0.1, 0.10.0.1 and 0.11.0.0 Protocol.java's PRODUCE_REQUEST array (v0; v1 adds
# throttle_time_ms; v2 message format v1, KIP-32; v3 transactional_id and record batch v2,
# KIP-98); 1.0.0 to 2.3.0 ProduceRequest.java's schemaVersions() (1.0: v5, KIP-112 / KIP-107;
# 2.0: v6, KIP-219; 2.1: v7, zstd, KIP-110); from 2.4.0 ProduceRequest.json's validVersions
# (2.4: "0-8", KIP-467; 2.8: "0-9", flexible; 3.7: "0-10", KIP-951; 3.8: "0-11", KIP-890;
# 4.0: "3-12", transactions v2, KIP-890, and v0–v2 gone, KIP-896; 4.1: "3-13", topic ids,
# KIP-516). 4.0–4.2 are not in rig's Kafka mirror: their JSON's comments say as much.
PRODUCE_VERSION_BY_RELEASE = (("4.1", 13), ("4.0", 12), ("3.8", 11), ("3.7", 10), ("2.8", 9),
                              ("2.4", 8), ("2.1", 7), ("2.0", 6), ("1.0", 5), ("0.11", 3),
                              ("0.10", 2), ("0.9", 1), ("0.8.2", 0))


def _newest(table: tuple[tuple[str, int], ...], release: str, what: str) -> int:
    for since, version in table:
        if release_key(release) >= release_key(since):
            return version
    raise ValueError(f"{what}: release {release} is older than rig models (0.8.2)")


def produce_version(release: str) -> int:
    """The Produce version a producer of Kafka `release` sends to brokers of that release."""
    return _newest(PRODUCE_VERSION_BY_RELEASE, release, "Produce")


# A follower's ListOffsets (on OFFSET_OUT_OF_RANGE) by inter.broker.protocol.version, for brokers
# of 2.0 and later: ReplicaFetcherThread.listOffsetRequestVersion (2.0.0–2.8.x; KAFKA_0_11_0_IV0
# → 2 first appears in 2.0's), then MetadataVersion.listOffsetRequestVersion (3.0–3.9: 3.0 → 7,
# 3.5 → 8, 3.9 → 9; 4.0 → 10 at IBP_4_0_IV3, 4.2 → 11 at IBP_4_2_IV1: not in rig's Kafka mirror,
# and v11's bytes are v10's). A release's IBP is its newest IV, as Kafka reads "X.Y".
FOLLOWER_LIST_OFFSETS_VERSION_BY_IBP = (("4.2", 11), ("4.0", 10), ("3.9", 9), ("3.5", 8),
                                        ("3.0", 7), ("2.8", 6), ("2.2", 5), ("2.1", 4),
                                        ("2.0", 3), ("0.11", 2), ("0.10.1", 1), ("0.8.2", 0))
# Brokers before 2.0 sent v1 from IBP 0.10.1 (ReplicaFetcherThread.earliestOrLatestOffset,
# 0.10.1.0–1.1.x: ListOffsetRequest.Builder.forReplica(1, …)), else v0 (0.9–0.10.0 the same
# thread; 0.8.2 SimpleConsumer.earliestOrLatestOffset, whose OffsetRequest is v0's bytes).
# A follower's OffsetsForLeaderEpoch by IBP: ReplicaFetcherThread / MetadataVersion
# .offsetForLeaderEpochRequestVersion (0.11 → 0, 2.0 → 1, 2.1 → 2, 2.3 → 3, 2.8 → 4; the same
# through 4.x).
FOLLOWER_EPOCH_VERSION_BY_IBP = (("2.8", 4), ("2.3", 3), ("2.1", 2), ("2.0", 1), ("0.8.2", 0))


def follower_list_offsets_version(release: str, ibp: str) -> int:
    """The ListOffsets version a follower of Kafka `release` sends at IBP `ibp`."""
    if release_key(release) < release_key("2.0"):
        return 1 if release_key(ibp) >= release_key("0.10.1") else 0
    return _newest(FOLLOWER_LIST_OFFSETS_VERSION_BY_IBP, ibp, "ListOffsets")


def follower_epoch_version(ibp: str) -> int:
    """The OffsetsForLeaderEpoch version a follower sends at IBP `ibp`."""
    return _newest(FOLLOWER_EPOCH_VERSION_BY_IBP, ibp, "OffsetsForLeaderEpoch")


# A consumer sends each release's newest ListOffsets and OffsetsForLeaderEpoch (ApiVersions):
# Protocol.java's LIST_OFFSET_REQUEST array at 0.10.0.1 (v0) and 0.10.1.1 (v1), then
# ListOffsetRequest.java / OffsetsForLeaderEpochRequest.java schemaVersions() at 0.11.0.0–2.3.0
# and the JSON's validVersions from 2.4.0: the same steps as a follower's tables above, release
# for IBP (0.11: ListOffsets v2; OffsetsForLeaderEpoch v0 from 0.11, which only 2.3+ consumers
# send: position validation needs v3, KIP-320).


def consumer_list_offsets_version(release: str) -> int:
    """The ListOffsets version a consumer of Kafka `release` sends (auto.offset.reset)."""
    return _newest(FOLLOWER_LIST_OFFSETS_VERSION_BY_IBP, release, "ListOffsets")


def consumer_epoch_version(release: str) -> int:
    """The OffsetsForLeaderEpoch version a consumer of Kafka `release` sends (validation)."""
    return _newest(FOLLOWER_EPOCH_VERSION_BY_IBP, release, "OffsetsForLeaderEpoch")


# -- the ZooKeeper-era controller's requests, and a broker's to it -------------------------------
# The controller picks its versions by its inter.broker.protocol.version
# (ControllerChannelManager's ControllerBrokerRequestBatch, 0.9–1.1 sendRequestsToBrokers, 2.x–3.9
# AbstractControllerBrokerRequestBatch.sendLeaderAndIsrRequest / sendUpdateMetadataRequests /
# sendStopReplicaRequests), each step first seen at the tag named: LeaderAndIsr v1 at IBP 1.0-IV0
# (1.0.0), v2 2.2-IV0 (2.2.0), v3 2.4-IV0 and v4 2.4-IV1 (2.4.0; v3 is no release's newest IV, so
# rig never sends it), v5 2.8-IV1 (2.8.0), v6 3.2-IV0 (3.2.0), v7 3.4-IV0 (3.4.0); before 1.0 v0.
LEADER_AND_ISR_VERSION_BY_IBP = (("3.4", 7), ("3.2", 6), ("2.8", 5), ("2.4", 4), ("2.2", 2),
                                 ("1.0", 1), ("0.8.2", 0))
# UpdateMetadata v1 at IBP 0.9 (0.9.0.1), v2 0.10.0-IV1 (0.10.0.1), v3 0.10.2-IV0 (0.10.2.0), v4
# 1.0-IV0 (1.0.0), v5 2.2-IV0 (2.2.0), v6 2.4-IV1 (2.4.0), v7 2.8-IV1 (2.8.0), v8 3.4-IV0 (3.4.0);
# 0.8.2's Scala kafka.api.UpdateMetadataRequest writes v0.
UPDATE_METADATA_VERSION_BY_IBP = (("3.4", 8), ("2.8", 7), ("2.4", 6), ("2.2", 5), ("1.0", 4),
                                  ("0.10.2", 3), ("0.10", 2), ("0.9", 1), ("0.8.2", 0))
# StopReplica v1 at IBP 2.2-IV0 (2.2.0), v2 2.4-IV1 (2.4.0), v3 2.6-IV0 (2.6.0), v4 3.4-IV0
# (3.4.0); before 2.2 v0.
STOP_REPLICA_VERSION_BY_IBP = (("3.4", 4), ("2.6", 3), ("2.4", 2), ("2.2", 1), ("0.8.2", 0))
# A broker's ControlledShutdown (KafkaServer.controlledShutdown): from 1.0.0 by IBP, v0 below
# 0.9, v1 below 2.2-IV0, v2 below 2.4-IV1 (2.2.0), else v3 (2.4.0); 0.9.0.1–0.11.0.x send their
# newest, v1, whatever the IBP (nextRequestHeader / ControlledShutdownRequest.Builder); 0.8.2's
# Scala kafka.api.ControlledShutdownRequest is v0, with v0's header (no client_id).
CONTROLLED_SHUTDOWN_VERSION_BY_IBP = (("2.4", 3), ("2.2", 2), ("0.9", 1), ("0.8.2", 0))
# AlterIsr / AlterPartition: the broker's channel to the controller asks the controller's newest
# (ApiVersions), the release's: AlterIsrRequest.json "0" (2.7.0–3.1.x), AlterPartitionRequest.json
# "0-1" (3.2.0), "0-2" (3.3.1), "0-3" (3.5.0–3.9; 4.x not in rig's Kafka mirror keeps v3). Below
# IBP 2.8 (MetadataVersion.isTopicIdsSupported) the builder stops at v1
# (AlterPartitionRequest.Builder: canUseTopicIds; DefaultAlterPartitionManager.buildRequest).
ALTER_PARTITION_VERSION_BY_RELEASE = (("3.5", 3), ("3.3", 2), ("3.2", 1), ("2.7", 0))


def leader_and_isr_version(ibp: str) -> int:
    """The LeaderAndIsr version a controller at IBP `ibp` sends."""
    return _newest(LEADER_AND_ISR_VERSION_BY_IBP, ibp, "LeaderAndIsr")


def update_metadata_version(ibp: str) -> int:
    """The UpdateMetadata version a controller at IBP `ibp` sends."""
    return _newest(UPDATE_METADATA_VERSION_BY_IBP, ibp, "UpdateMetadata")


def stop_replica_version(ibp: str) -> int:
    """The StopReplica version a controller at IBP `ibp` sends."""
    return _newest(STOP_REPLICA_VERSION_BY_IBP, ibp, "StopReplica")


def controlled_shutdown_version(release: str, ibp: str) -> int:
    """The ControlledShutdown version a broker of Kafka `release` sends at IBP `ibp`."""
    if release_key("0.9") <= release_key(release) < release_key("1.0"):
        return 1
    return _newest(CONTROLLED_SHUTDOWN_VERSION_BY_IBP, ibp, "ControlledShutdown")


def alter_partition_version(release: str, ibp: str) -> int:
    """The AlterIsr / AlterPartition version a leader of Kafka `release` sends at IBP `ibp`
    (2.7+: ZooKeeper mode's AlterIsr starts at IBP 2.7-IV2; KRaft's always has topic ids)."""
    newest = _newest(ALTER_PARTITION_VERSION_BY_RELEASE, release, "AlterPartition")
    return newest if release_key(ibp) >= release_key("2.8") else min(newest, 1)
# A producer's and a consumer's Metadata: the release's newest version (ApiVersions; before
# 0.10 a client sends its own newest). Sources, at each release's tag: Protocol.java's
# METADATA_REQUEST array at 0.8.2.2 and 0.9.0.1 (v0), 0.10.0.1 (v1: rack, controller_id,
# is_internal, KIP-4) and 0.11.0.0 (v4: v3 throttle_time_ms, v4 allow_auto_topic_creation,
# KIP-107 / KIP-124); MetadataRequest.java's schemaVersions() at 1.0.0 (v5: offline_replicas,
# KIP-112), 2.0.0 (v6) and 2.1.0 (v7: leader_epoch, KIP-320); MetadataRequest.json's
# validVersions at 2.3.0 ("0-8": authorized operations, KIP-430), 2.4.0 ("0-9", flexible),
# 2.8.0 ("0-11": v10 topic ids, KIP-516; v11 KIP-700), 3.1.0 ("0-12") to 3.9.0; 4.0 "0-13"
# (the response's top-level error_code, KIP-1102: 4.x is not in rig's Kafka mirror).
METADATA_VERSION_BY_RELEASE = (("4.0", 13), ("3.1", 12), ("2.8", 11), ("2.4", 9), ("2.3", 8),
                               ("2.1", 7), ("2.0", 6), ("1.0", 5), ("0.11", 4), ("0.10", 1),
                               ("0.8.2", 0))

# A consumer's FindCoordinator: Protocol.java's CONSUMER_METADATA_REQUEST (0.8.2.2) and
# GROUP_COORDINATOR_REQUEST (0.9.0.1, 0.10.0.1) arrays, v0 (the same bytes as FindCoordinator
# v0); FIND_COORDINATOR_REQUEST at 0.11.0.0 (v1: key_type, KIP-98); FindCoordinatorRequest.java
# at 2.0.0 (v2); the JSON's validVersions at 2.4.0 ("0-3", flexible), 3.0.0 ("0-4": batched
# coordinator_keys, KIP-699), 3.8.0 ("0-5", KIP-890) and 3.9.0 ("0-6", KIP-932). 4.x: taken
# as 3.9's (not in rig's Kafka mirror).
FIND_COORDINATOR_VERSION_BY_RELEASE = (("3.9", 6), ("3.8", 5), ("3.0", 4), ("2.4", 3),
                                       ("2.0", 2), ("0.11", 1), ("0.8.2", 0))
# OffsetCommit: Protocol.java's OFFSET_COMMIT_REQUEST at 0.8.2.2 (v1: the __consumer_offsets
# commit, with generation and consumer id; rig commits there, never to ZooKeeper's v0), 0.9.0.1
# (v2: retention_time_ms) and 0.11.0.0 (v3: throttle_time_ms); OffsetCommitRequest.java at
# 2.0.0 (v4) and 2.1.0 (v6: v5 drops retention_time_ms, v6 committed_leader_epoch, KIP-320);
# the JSON's validVersions at 2.3.0 ("0-7": group_instance_id, KIP-345), 2.4.0 ("0-8",
# flexible), 3.6.0 ("0-9", but "latestVersionUnstable": a 3.6 client sends v8) and 3.7.0
# ("0-9", stable). 4.x: taken as 3.9's (not in rig's Kafka mirror; a v10 naming topics by id,
# should a 4.1+ classic consumer send it, is not modelled).
OFFSET_COMMIT_VERSION_BY_RELEASE = (("3.7", 9), ("2.4", 8), ("2.3", 7), ("2.1", 6), ("2.0", 4),
                                    ("0.11", 3), ("0.9", 2), ("0.8.2", 1))
# OffsetFetch: Protocol.java's OFFSET_FETCH_REQUEST at 0.8.2.2, 0.9.0.1 and 0.10.0.1 (v1: from
# __consumer_offsets) and 0.11.0.0 (v3: v2 top-level error_code, v3 throttle_time_ms);
# OffsetFetchRequest.java at 2.0.0 (v4) and 2.1.0 (v5: committed_leader_epoch, KIP-320); the
# JSON's validVersions at 2.4.0 ("0-6", flexible), 2.5.0 ("0-7": require_stable, KIP-447),
# 3.0.0 ("0-8": groups, KIP-709) and 3.7.0 ("0-9": member id and epoch, KIP-848; a classic
# consumer sends null and -1). 4.x: taken as 3.9's, as OffsetCommit's.
OFFSET_FETCH_VERSION_BY_RELEASE = (("3.7", 9), ("3.0", 8), ("2.5", 7), ("2.4", 6), ("2.1", 5),
                                   ("2.0", 4), ("0.11", 3), ("0.8.2", 1))


def metadata_version(release: str) -> int:
    """The Metadata version a producer or consumer of Kafka `release` sends."""
    return _newest(METADATA_VERSION_BY_RELEASE, release, "Metadata")


def find_coordinator_version(release: str) -> int:
    return _newest(FIND_COORDINATOR_VERSION_BY_RELEASE, release, "FindCoordinator")


def offset_commit_version(release: str) -> int:
    return _newest(OFFSET_COMMIT_VERSION_BY_RELEASE, release, "OffsetCommit")


def offset_fetch_version(release: str) -> int:
    return _newest(OFFSET_FETCH_VERSION_BY_RELEASE, release, "OffsetFetch")


# -- a KRaft broker's registration and heartbeats ------------------------------------------------
# The broker's channel to the controller (NodeToControllerChannelManager; before 3.7
# BrokerToControllerChannelManager) asks ApiVersions of the controller, of the same release in
# rig: each request goes at the release's newest version, read from its JSON's validVersions at
# each tag: BrokerRegistrationRequest.json "0" (2.8.0–3.3.2), "0-1" (3.4.0–3.6.2), "0-3"
# (3.7.0–3.8.x), "0-4" (3.9.0-rc3, the 3.9 branch; 4.0–4.2 keep it: not in rig's Kafka mirror,
# and v5 comes with KIP-1066 after them); BrokerHeartbeatRequest.json "0" (2.8.0–3.6.2), "0-1"
# (3.7.0 on). rig's broker never migrates from ZooKeeper (IsMigratingZkBroker false), so
# BrokerRegistrationRequest.Builder's oldestAllowedVersion (1 for a migrating broker) is moot.
BROKER_REGISTRATION_VERSION_BY_RELEASE = (("3.9", 4), ("3.7", 3), ("3.4", 1), ("2.8", 0))
BROKER_HEARTBEAT_VERSION_BY_RELEASE = (("3.7", 1), ("2.8", 0))


def broker_registration_version(release: str) -> int:
    """The BrokerRegistration version a KRaft broker of Kafka `release` sends."""
    return _newest(BROKER_REGISTRATION_VERSION_BY_RELEASE, release, "BrokerRegistration")


def broker_heartbeat_version(release: str) -> int:
    """The BrokerHeartbeat version a KRaft broker of Kafka `release` sends."""
    return _newest(BROKER_HEARTBEAT_VERSION_BY_RELEASE, release, "BrokerHeartbeat")
