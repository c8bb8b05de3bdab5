"""A broker's channel to the controller on its own (rig.cluster.broker_to_controller_channel):
the retry timeout of NodeToControllerRequestThread.generateRequests, which gives a request up
once it has waited that long since it was sent, looked at whenever the request comes to be sent
again (here: the 100 ms looks for a controller while none is known)."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from rig.cluster.broker_to_controller_channel import BrokerToControllerChannel
from rig.engine import Simulation
from rig.engine.rng import Streams


class Plane:
    def __init__(self) -> None:
        self.sim = Simulation()
        self.streams = Streams(0)
        self.variant = SimpleNamespace(kafka="3.9")
        self.network = SimpleNamespace(cuts={}, round_trip_us=lambda a, b: 1000,
                                       base_link=lambda a, b: SimpleNamespace(latency_us=500))
        self.brokers: dict[int, Any] = {}
        self.wire: list[tuple[Any, Any]] = []

    def watch_connections(self, client: Any) -> None:
        pass

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None],
             **kwargs: Any) -> None:
        self.wire.append((src, dst))


def channel(plane: Plane, retry_timeout_ms: int | None) -> BrokerToControllerChannel:
    broker = SimpleNamespace(id=0, incarnation=0, alive=True, machine_down=False,
                             config=SimpleNamespace(controller_socket_timeout_ms=30_000),
                             schedule=lambda delay_us, action: plane.sim.call_after(delay_us,
                                                                                    action))
    plane.brokers[0] = broker
    return BrokerToControllerChannel(plane, broker, lambda: None, name="heartbeat",
                                     retry_timeout_ms=retry_timeout_ms)


def test_a_request_with_no_controller_to_go_to_is_given_up_at_its_retry_timeout() -> None:
    plane = Plane()
    ends: list[tuple[str, float]] = []
    chan = channel(plane, 4500)
    plane.sim.call_after(250_000, lambda: chan.send(
        100, lambda node, reply: None, lambda top, result: ends.append(("answered", 0.0)),
        lambda: ends.append(("timed out", plane.sim.now_us / 1000))))
    plane.sim.run(60_000_000)
    # Sent at 250 ms; the looks at 350, 450 … ms: the first at or past 4.5 s later gives it up.
    assert ends == [("timed out", 4750.0)] and plane.wire == []


def test_without_a_retry_timeout_the_request_waits_for_a_controller() -> None:
    plane = Plane()
    ends: list[str] = []
    chan = channel(plane, None)
    chan.send(100, lambda node, reply: None, lambda top, result: ends.append("answered"),
              lambda: ends.append("timed out"))
    plane.sim.run(60_000_000)
    assert ends == [] and plane.wire == []
