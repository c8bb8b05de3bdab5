"""The Kafka APIs rig speaks on the wire: each one's api_key, the versions rig knows and the first
flexible version (KIP-482: compact encodings, tagged fields, request header v2 / response header
v1), as each message's JSON gives them (clients/src/main/resources/common/message/*.json)."""

from __future__ import annotations

from dataclasses import dataclass

from rig.errors import ProtocolError


@dataclass(frozen=True, slots=True, eq=False)
class Api:
    """One API. `versions` is the union over the releases rig models (Kafka 4.0 dropped the
    oldest of several, KIP-896: a release's own range is its profile's business)."""

    name: str
    key: int
    versions: range
    first_flexible: int  # the JSON's "flexibleVersions": "N+"

    def is_flexible(self, version: int) -> bool:
        """Whether `version` uses compact encodings, tagged fields and header v2 / v1."""
        return version >= self.first_flexible

    def check_version(self, version: int) -> None:
        """Raise ProtocolError unless `version` is one of this API's that rig speaks."""
        if type(version) is not int or version not in self.versions:
            raise ProtocolError(
                f"{self.name} version {version!r} is not supported "
                f"(rig speaks v{self.versions[0]}–v{self.versions[-1]})"
            )


# Produce: ProduceRequest.json "validVersions" "0-11" at 3.9, "3-12" at 4.0 (v12: KIP-890's
# transactions v2), "3-13" at 4.1 (v13: topic ids, KIP-516); "flexibleVersions": "9+" (2.8).
PRODUCE = Api("Produce", 0, range(0, 14), 9)
# Fetch: FetchRequest.json "0-17" at 3.9, "4-18" at 4.1 (v18: KIP-1166); "flexibleVersions": "12+".
FETCH = Api("Fetch", 1, range(0, 19), 12)
# ListOffsets: ListOffsetsRequest.json "0-9" at 3.9, "1-10" at 4.0 (KIP-1075), "1-11" at 4.2
# (KIP-1023); "flexibleVersions": "6+".
LIST_OFFSETS = Api("ListOffsets", 2, range(0, 12), 6)
# OffsetForLeaderEpochRequest.json: "0-4", "flexibleVersions": "4+" (0.11 to 4.x).
OFFSETS_FOR_LEADER_EPOCH = Api("OffsetsForLeaderEpoch", 23, range(0, 5), 4)
# Metadata: MetadataRequest.json "0-12" at 3.1–3.9, "0-13" at 4.0 (v13: the response's top-level
# ErrorCode, KIP-1102; 4.x is not in rig's Kafka mirror); "flexibleVersions": "9+" (2.4).
METADATA = Api("Metadata", 3, range(0, 14), 9)
# OffsetCommit: OffsetCommitRequest.json "0-9" at 3.6–3.9 (v9: KIP-848's); "flexibleVersions": "8+".
OFFSET_COMMIT = Api("OffsetCommit", 8, range(0, 10), 8)
# OffsetFetch: OffsetFetchRequest.json "0-9" at 3.7–3.9 (v9: KIP-848's); "flexibleVersions": "6+".
OFFSET_FETCH = Api("OffsetFetch", 9, range(0, 10), 6)
# FindCoordinator: FindCoordinatorRequest.json "0-6" at 3.9 (v6: KIP-932's share groups);
# "flexibleVersions": "3+". Before 0.9 the same key was ConsumerMetadata (Protocol.java), v0's
# bytes both ways.
FIND_COORDINATOR = Api("FindCoordinator", 10, range(0, 7), 3)

# The ZooKeeper-era controller's requests to brokers, and a broker's ControlledShutdown to it:
# LeaderAndIsrRequest.json "0-7", "flexibleVersions": "4+"; StopReplicaRequest.json "0-4", "2+";
# UpdateMetadataRequest.json "0-8", "6+"; ControlledShutdownRequest.json "0-3", "3+" (all at
# 3.9; ZooKeeper mode, and these four with it, are gone in 4.0, KIP-833). Before 2.4 the same
# versions are in Protocol.java / the requests' Java classes (0.8.2: Scala kafka.api classes).
LEADER_AND_ISR = Api("LeaderAndIsr", 4, range(0, 8), 4)
STOP_REPLICA = Api("StopReplica", 5, range(0, 5), 2)
UPDATE_METADATA = Api("UpdateMetadata", 6, range(0, 9), 6)
CONTROLLED_SHUTDOWN = Api("ControlledShutdown", 7, range(0, 4), 3)
# A leader's ISR change to the controller: AlterIsrRequest.json "0" (2.7–3.1), renamed
# AlterPartitionRequest.json at 3.2 ("0-1"; 3.3 "0-2"; 3.5 "0-3", through 3.9); flexible from v0.
# It continues in 4.x (KRaft), which is not in rig's Kafka mirror.
ALTER_PARTITION = Api("AlterPartition", 56, range(0, 4), 0)
# A KRaft broker's registration and heartbeats to the controller: BrokerRegistrationRequest.json
# "0" (2.8.0–3.3.x), "0-1" (3.4.0: IsMigratingZkBroker), "0-3" (3.7.0: LogDirs, KIP-858;
# PreviousBrokerEpoch, KIP-966), "0-4" (3.9: KAFKA-17011's features with MinSupportedVersion 0);
# BrokerHeartbeatRequest.json "0" (2.8.0–3.6.x), "0-1" (3.7.0: tagged OfflineLogDirs, KIP-858).
# Flexible from v0. 4.x keeps "0-4" and "0-1" (not in rig's Kafka mirror; v5 / v2, KIP-1066's
# CordonedLogDirs, are in no release rig models).
BROKER_REGISTRATION = Api("BrokerRegistration", 62, range(0, 5), 0)
BROKER_HEARTBEAT = Api("BrokerHeartbeat", 63, range(0, 2), 0)

APIS = {api.key: api for api in (PRODUCE, FETCH, LIST_OFFSETS, METADATA, OFFSET_COMMIT,
                                 OFFSET_FETCH, FIND_COORDINATOR, OFFSETS_FOR_LEADER_EPOCH,
                                 LEADER_AND_ISR, STOP_REPLICA, UPDATE_METADATA,
                                 CONTROLLED_SHUTDOWN, ALTER_PARTITION, BROKER_REGISTRATION,
                                 BROKER_HEARTBEAT)}


def api_of(key: int) -> Api:
    """The API with api_key `key`; ProtocolError if rig does not speak it."""
    api = APIS.get(key)
    if api is None:
        spoken = ", ".join(f"{a.name} ({a.key})" for a in APIS.values())
        raise ProtocolError(f"api_key {key} is not one rig speaks: {spoken}")
    return api
