"""A KRaft broker's BrokerRegistration and BrokerHeartbeat and the controller's answers are
counted at their exact bytes on the wire: the size prefix, the header (the broker id as client
id) and the body at the release's newest version (BrokerLifecycleManager over
NodeToControllerChannelManager), each checked here against a message built field by field
(the broker's id, listener and rack, the release's features, one log directory) and encoded,
in a whole cluster whose traffic ledger files those bytes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from rig.cluster.kraft.lifecycle_wire import (
    broker_features,
    broker_heartbeat_bytes,
    broker_heartbeat_response_bytes,
    broker_registration_bytes,
    broker_registration_response_bytes,
)
from rig.cluster.kraft.quorum_controller import NODE
from rig.cluster.metadata_response import CLUSTER_ID
from rig.cluster.transport import Transport
from rig.events import names
from rig.protocol import (
    BROKER_HEARTBEAT,
    BROKER_REGISTRATION,
    RequestHeader,
    ResponseHeader,
    encode_request_header,
    encode_response_header,
    frame,
)
from rig.protocol.broker_heartbeat import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    encode_broker_heartbeat_request,
    encode_broker_heartbeat_response,
)
from rig.protocol.broker_registration import (
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    Feature,
    Listener,
    encode_broker_registration_request,
    encode_broker_registration_response,
)
from rig.scenario import api_versions
from rig.scenario.load import load_scenario
from rig.scenario.profiles import VERSIONS
from rig.scenario.version_rules import release_key
from tests.cluster.simulated import checked_run, lifecycle_origin, named

KRAFT = [v for v in VERSIONS if release_key(v) >= release_key("3.3")]


def test_each_release_sends_its_newest_versions() -> None:
    assert {v: (api_versions.broker_registration_version(v),
                api_versions.broker_heartbeat_version(v)) for v in KRAFT} == {
        "3.3": (0, 0), "3.4": (1, 0), "3.5": (1, 0), "3.6": (1, 0), "3.7": (3, 1),
        "3.8": (3, 1), "3.9": (4, 1), "4.0": (4, 1), "4.1": (4, 1), "4.2": (4, 1)}
    assert api_versions.broker_registration_version("2.8") == 0
    assert {v: len(broker_features(v)) for v in KRAFT} == {
        "3.3": 1, "3.4": 1, "3.5": 1, "3.6": 1, "3.7": 1, "3.8": 1, "3.9": 2, "4.0": 5,
        "4.1": 5, "4.2": 7}
    assert broker_features("3.0") == ()
    assert broker_features("3.9") == ("metadata.version", "kraft.version")


def _request(api: Any, version: int, broker: int, body: bytes) -> int:
    return len(frame(encode_request_header(RequestHeader(version, 0, str(broker), api.key)),
                     body))


def _response(api: Any, version: int, body: bytes) -> int:
    return len(frame(encode_response_header(ResponseHeader(0), version, api), body))


def _registration(kafka: str, broker: int, rack: str | None) -> int:
    """The registration, built from Kafka's fields: placeholder values where only the width
    counts (incarnation, log directory id, epochs, feature levels)."""
    version = api_versions.broker_registration_version(kafka)
    request = BrokerRegistrationRequest(
        broker, CLUSTER_ID, bytes(range(16)),
        (Listener("PLAINTEXT", f"broker-{broker}", 9092, 0),),
        tuple(Feature(name, 0, 1) for name in broker_features(kafka)), rack, False,
        (bytes(16),) if version >= 2 else (), 7)
    return _request(BROKER_REGISTRATION, version, broker,
                    encode_broker_registration_request(request, version))


def _heartbeat(kafka: str, broker: int) -> int:
    version = api_versions.broker_heartbeat_version(kafka)
    return _request(BROKER_HEARTBEAT, version, broker, encode_broker_heartbeat_request(
        BrokerHeartbeatRequest(broker, 7, 1234, False, False), version))


def _answers(kafka: str) -> tuple[int, int]:
    """(registration answer, heartbeat answer)."""
    registration = api_versions.broker_registration_version(kafka)
    heartbeat = api_versions.broker_heartbeat_version(kafka)
    return (_response(BROKER_REGISTRATION, registration, encode_broker_registration_response(
                BrokerRegistrationResponse(0, 0, 7), registration)),
            _response(BROKER_HEARTBEAT, heartbeat, encode_broker_heartbeat_response(
                BrokerHeartbeatResponse(0, 0, True, False, False), heartbeat)))


@pytest.mark.parametrize("kafka", ["3.3", "3.4", "3.7", "3.9", "4.0", "4.2"])
@pytest.mark.parametrize(("broker", "rack"), [(0, None), (12, "az-b")])
def test_the_lifecycle_messages_have_their_encoded_bytes(kafka: str, broker: int,
                                                         rack: str | None) -> None:
    variant = SimpleNamespace(kafka=kafka)
    node = SimpleNamespace(id=broker, rack=rack)
    assert broker_registration_bytes(variant, node) == _registration(kafka, broker, rack)
    assert broker_heartbeat_bytes(variant, node) == _heartbeat(kafka, broker)
    assert (broker_registration_response_bytes(variant),
            broker_heartbeat_response_bytes(variant)) == _answers(kafka)


def test_the_figures_of_3_9() -> None:
    # BrokerRegistration v4 of broker 0, no rack: 4 + 12 header + 138 body; its answer 24;
    # BrokerHeartbeat v1: 4 + 12 + 23, its answer 4 + 5 + 10 (was 100 bytes each).
    variant, broker = SimpleNamespace(kafka="3.9"), SimpleNamespace(id=0, rack=None)
    assert broker_registration_bytes(variant, broker) == 154
    assert broker_registration_response_bytes(variant) == 24
    assert broker_heartbeat_bytes(variant, broker) == 39
    assert broker_heartbeat_response_bytes(variant) == 19


# Broker 1 crashes at 5 s and restarts at 20 s (after its fencing): it registers again.
SCENARIO = """
name: kraft-wire
duration: 30s
kafka: "{kafka}"
strategies: {{controller: kraft}}
cluster:
  brokers: {brokers}
topics: [{{name: t, partitions: 3, replication_factor: 3}}]
workload:
  producers: [{{name: p, topic: t, rate: 100, acks: all, record_size: 100}}]
faults:
  - {{kind: crash, broker: 1, at: 5s, restart_after: 15s}}
"""
RACKED = "[{id: 0, rack: az-a}, {id: 1, rack: az-bb}, {id: 2, rack: az-c}]"


@pytest.mark.parametrize(("kafka", "racked"), [("3.5", False), ("3.9", True), ("4.1", True)])
def test_a_kraft_clusters_ledger_files_the_exact_lifecycle_bytes(
        kafka: str, racked: bool, write_scenario: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    filed: list[tuple[Any, Any, int, str]] = []  # (src, dst, bytes, what) the ledger filed
    send = Transport.send

    def recording(self: Transport, src: Any, dst: Any, nbytes: int, deliver: Any,
                  **kwargs: Any) -> None:
        key = (src, dst, kwargs.get("kind", "control"))
        before = self.traffic.get(key, [0, 0])[1]
        send(self, src, dst, nbytes, deliver, **kwargs)
        if self.traffic.get(key, [0, 0])[1] > before:
            filed.append((src, dst, nbytes, lifecycle_origin(deliver)))

    monkeypatch.setattr(Transport, "send", recording)
    text = SCENARIO.format(kafka=kafka, brokers=RACKED if racked else 3)
    [variant] = load_scenario(write_scenario(text, "s.yaml")).variants
    events, _ = checked_run(variant, tmp_path, "kraft-wire")
    assert [e["broker"] for e in named(events, names.BROKER_REGISTERED)] == [1]

    def sizes(what: str, src: Any = None, dst: Any = None) -> list[int]:
        return [n for s, d, n, q in filed if q.startswith(f"BrokerLifecycle.{what}.")
                and (src is None or s == src) and (dst is None or d == dst)]

    registration, heartbeat = _answers(kafka)
    for b in (0, 1, 2):
        beats = sizes("_heartbeat", b, NODE)
        assert len(beats) > 5 and set(beats) == {_heartbeat(kafka, b)}
        assert set(sizes("_heartbeat", NODE, b)) == {heartbeat}
    assert sizes("_register", 1, NODE) == [_registration(kafka, 1, "az-bb" if racked else None)]
    assert sizes("_register", NODE, 1) == [registration]
    # The ledger's control bytes from each broker to the controller hold them: the old fixed
    # 100 bytes a message would give other figures.
    traffic = {(e["src"], e["dst"]): e for e in named(events, names.NET_TRAFFIC)
               if e["kind"] == "control"}
    for b in (0, 1, 2):
        up = traffic[(str(b), NODE)]
        assert up["bytes"] == sum(n for s, d, n, _ in filed if (s, d) == (b, NODE))
        lifecycle = sizes("_heartbeat", b, NODE) + sizes("_register", b, NODE)
        old = up["bytes"] - sum(lifecycle) + 100 * len(lifecycle)
        assert up["bytes"] < old
