"""Kafka's protocol error codes that the model answers with (Errors.java), named once."""

from __future__ import annotations

from typing import Final

NONE: Final = 0
OFFSET_OUT_OF_RANGE: Final = 1
UNKNOWN_TOPIC_OR_PARTITION: Final = 3
NOT_LEADER_OR_FOLLOWER: Final = 6
REQUEST_TIMED_OUT: Final = 7
NETWORK_EXCEPTION: Final = 13
NOT_COORDINATOR: Final = 16
NOT_ENOUGH_REPLICAS: Final = 19
NOT_ENOUGH_REPLICAS_AFTER_APPEND: Final = 20
INVALID_REPLICA_ASSIGNMENT: Final = 39
NOT_CONTROLLER: Final = 41
INVALID_REQUEST: Final = 42
OPERATION_NOT_ATTEMPTED: Final = 55
FETCH_SESSION_ID_NOT_FOUND: Final = 70
INVALID_FETCH_SESSION_EPOCH: Final = 71
FENCED_LEADER_EPOCH: Final = 74  # KIP-320: the request's leader epoch is older than the broker's
UNKNOWN_LEADER_EPOCH: Final = 75  # KIP-320: newer than the broker's (it has not heard of it yet)
STALE_BROKER_EPOCH: Final = 77  # KIP-380 / KRaft: a request from a broker's earlier process
INVALID_UPDATE_VERSION: Final = 95
DUPLICATE_BROKER_REGISTRATION: Final = 101
INELIGIBLE_REPLICA: Final = 107  # KIP-841: a fenced or shutting-down replica in the proposed ISR
NEW_LEADER_ELECTED: Final = 108  # the change completed a reassignment and elected another leader

# Each code above by its name, for the events that carry the name beside the number.
NAMES: Final[dict[int, str]] = {code: name for name, code in list(globals().items())
                                if name.isupper() and type(code) is int}


def name_of(code: int) -> str:
    """Kafka's name for an error code (the number itself when rig does not know it)."""
    return NAMES.get(code, str(code))

# What a producer retries (Kafka's RetriableException subclasses among the above).
RETRIABLE: Final = frozenset({NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT, NETWORK_EXCEPTION,
                              NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND})
# After which a producer asks for metadata (Sender.completeBatch: an InvalidMetadataException;
# a request without an answer closes its connection, and NetworkClient.handleServerDisconnect
# asks too). NOT_ENOUGH_REPLICAS does not.
STALE_METADATA: Final = frozenset({NOT_LEADER_OR_FOLLOWER, NETWORK_EXCEPTION, REQUEST_TIMED_OUT})
