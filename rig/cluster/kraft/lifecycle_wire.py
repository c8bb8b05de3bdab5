"""The exact bytes on the wire of a KRaft broker's BrokerRegistration and BrokerHeartbeat and of
the controller's answers (BrokerLifecycleManager.sendBrokerRegistration / sendBrokerHeartbeat):
the size prefix, the header (the broker id as client id: the NetworkClient of the broker's
channel to the controller, NodeToControllerChannelManager's config.brokerId.toString) and the
body (rig.protocol.broker_registration, broker_heartbeat) at the version
rig.scenario.api_versions gives the variant's release, sized from what rig holds.

A registration carries:
- the cluster id: rig's one (rig.cluster.metadata_response.CLUSTER_ID, a 22-character
  Uuid.toString);
- the process's incarnation id: a uuid, 16 bytes whatever its value;
- the broker's listeners: one, "PLAINTEXT" on host "broker-<id>", port 9092, security protocol
  0, as rig.cluster.controller_wire names it (BrokerServer: the advertised listeners,
  listenerInfo.toBrokerRegistrationRequest);
- the features the release supports (BROKER_FEATURES_BY_RELEASE: only their names' lengths
  vary, the levels are int16);
- the broker's rack, or null;
- v1+: IsMigratingZkBroker, false (rig migrates no ZooKeeper broker); v2+: the ids of its log
  directories, one (a rig broker has one log.dirs entry: LogManager.directoryIdsSet); v3+: the
  broker epoch of its last clean shutdown (fixed-width: -1 or the epoch, the same bytes).
A heartbeat reports no offline log directory (rig fails none): v1's tagged OfflineLogDirs is
empty and not sent, so its bytes are v0's. The answers (an epoch; caught up, fenced, shut down)
have no variable part: an error answer has the same bytes.
"""

from __future__ import annotations

from typing import Any

from rig.cluster.controller_wire import LISTENER
from rig.cluster.endpoints import broker_host
from rig.cluster.metadata_response import CLUSTER_ID
from rig.protocol import (
    BROKER_HEARTBEAT,
    BROKER_REGISTRATION,
    request_wire_size,
    response_wire_size,
)
from rig.protocol.broker_heartbeat import (
    broker_heartbeat_request_body_size,
    broker_heartbeat_response_body_size,
)
from rig.protocol.broker_registration import (
    broker_registration_request_body_size,
    broker_registration_response_body_size,
)
from rig.scenario import api_versions
from rig.scenario.version_rules import release_key

LOG_DIRS = 1  # log directory ids a broker registers (v2+)

# The features a KRaft broker registers, by the first release that registers them, newest first
# (BrokerServer passes BrokerFeatures.createDefault's to BrokerLifecycleManager.start):
# - 2.8–3.2: none (Server.SUPPORTED_FEATURES, an empty map at 3.0.0 and 3.2.0);
# - 3.3: metadata.version (BrokerFeatures.defaultSupportedFeatures at 3.3.1: the one entry,
#   MINIMUM_KRAFT_VERSION to the latest level); 3.8 adds Features.PRODUCTION_FEATURES, empty
#   there (TEST_VERSION alone, filtered out);
# - 3.9: + kraft.version: a production feature is registered when its latest production level
#   is above 0 (the 3.9 branch's BrokerFeatures); KRAFT_VERSION_1 is at IBP_3_9_IV0, the latest
#   production metadata version, TransactionVersion's TV_1 at IBP_4_0_IV0 (level 0: left out);
# - 4.0: + transaction.version, group.version, eligible.leader.replicas.version: from 4.0 each
#   feature names its own LATEST_PRODUCTION (Feature.java; TV_2, GV_1, ELRV_1, ELR's "set
#   eligible.leader.replicas.version=1" of 4.0's docs needs every broker to register it);
# - 4.1: the same: ShareVersion's and StreamsVersion's LATEST_PRODUCTION are SV_0 (preview,
#   early access);
# - 4.2: + share.version, streams.version (both production-ready in 4.2, the 4.1 sources'
#   comments on their LATEST_PRODUCTION say).
# 4.x is not in rig's Kafka mirror. Every release sends v4 once a feature's lowest level is 0
# (3.9 on), so BrokerRegistrationRequest.Builder's v0–v3 filter drops nothing here.
BROKER_FEATURES_BY_RELEASE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("4.2", ("metadata.version", "kraft.version", "transaction.version", "group.version",
             "eligible.leader.replicas.version", "share.version", "streams.version")),
    ("4.0", ("metadata.version", "kraft.version", "transaction.version", "group.version",
             "eligible.leader.replicas.version")),
    ("3.9", ("metadata.version", "kraft.version")),
    ("3.3", ("metadata.version",)),
    ("2.8", ()),
)


def broker_features(release: str) -> tuple[str, ...]:
    """The names of the features a KRaft broker of Kafka `release` registers."""
    for since, names in BROKER_FEATURES_BY_RELEASE:
        if release_key(release) >= release_key(since):
            return names
    raise ValueError(f"BrokerRegistration: release {release} has no KRaft mode (2.8+)")


def broker_registration_bytes(variant: Any, broker: Any) -> int:
    """A broker's BrokerRegistration: its id, listener, rack; the release's features."""
    version = api_versions.broker_registration_version(variant.kafka)
    body = broker_registration_request_body_size(
        version, CLUSTER_ID, [(LISTENER, broker_host(broker.id))], broker_features(variant.kafka),
        broker.rack, LOG_DIRS)
    return request_wire_size(BROKER_REGISTRATION, version, str(broker.id), body)


def broker_registration_response_bytes(variant: Any) -> int:
    version = api_versions.broker_registration_version(variant.kafka)
    return response_wire_size(BROKER_REGISTRATION, version,
                              broker_registration_response_body_size(version))


def broker_heartbeat_bytes(variant: Any, broker: Any) -> int:
    version = api_versions.broker_heartbeat_version(variant.kafka)
    return request_wire_size(BROKER_HEARTBEAT, version, str(broker.id),
                             broker_heartbeat_request_body_size(version))


def broker_heartbeat_response_bytes(variant: Any) -> int:
    version = api_versions.broker_heartbeat_version(variant.kafka)
    return response_wire_size(BROKER_HEARTBEAT, version,
                              broker_heartbeat_response_body_size(version))
