"""rig's protocol error codes are Kafka's (org.apache.kafka.common.protocol.Errors), and are named
in one module: an error code is what an event's `error_code` and `errors` carry, and what a
reader looks up in Kafka's table. UNKNOWN_LEADER_EPOCH was 76 (UNSUPPORTED_COMPRESSION_TYPE)
until the event log started naming each refused partition's error."""

from __future__ import annotations

import ast
from pathlib import Path

import rig.protocol.errors as errors
from tests.conftest import ROOT

# From Errors.java (apache/kafka, clients/src/main/java/org/apache/kafka/common/protocol), the
# codes rig answers with.
KAFKA = {
    "NONE": 0, "OFFSET_OUT_OF_RANGE": 1, "UNKNOWN_TOPIC_OR_PARTITION": 3,
    "NOT_LEADER_OR_FOLLOWER": 6, "REQUEST_TIMED_OUT": 7, "NETWORK_EXCEPTION": 13,
    "NOT_COORDINATOR": 16, "NOT_ENOUGH_REPLICAS": 19, "NOT_ENOUGH_REPLICAS_AFTER_APPEND": 20,
    "INVALID_REPLICA_ASSIGNMENT": 39, "NOT_CONTROLLER": 41, "INVALID_REQUEST": 42,
    "OPERATION_NOT_ATTEMPTED": 55, "FETCH_SESSION_ID_NOT_FOUND": 70,
    "INVALID_FETCH_SESSION_EPOCH": 71, "FENCED_LEADER_EPOCH": 74, "UNKNOWN_LEADER_EPOCH": 75,
    "STALE_BROKER_EPOCH": 77, "INVALID_UPDATE_VERSION": 95, "DUPLICATE_BROKER_REGISTRATION": 101,
    "INELIGIBLE_REPLICA": 107, "NEW_LEADER_ELECTED": 108,
}


def _codes() -> dict[str, int]:
    return {name: value for name, value in vars(errors).items()
            if name.isupper() and type(value) is int}


def test_every_code_is_kafkas() -> None:
    assert _codes() == KAFKA


def test_no_other_module_names_an_error_code() -> None:
    """A module-level constant named like one of Kafka's errors, outside rig.protocol.errors,
    is a second definition that can drift (as 76 did)."""
    found = []
    for path in sorted((ROOT / "rig").rglob("*.py")):
        if path == Path(errors.__file__):
            continue
        for node in ast.parse(path.read_text("utf-8")).body:
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) else [])
            found += [f"{path.relative_to(ROOT)}: {t.id}" for t in targets
                      if isinstance(t, ast.Name) and t.id in KAFKA]
    assert found == []
