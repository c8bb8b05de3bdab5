"""The cluster as one replica fetcher sees it, for the fetcher tests: a simulation, a meter, the
strategies, and a wire on which every message waits until the test delivers it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

from rig.cluster.context import Strategies
from rig.cluster.wire import Meter
from rig.engine import Simulation
from rig.engine.rng import Streams
from rig.events.log import positional
from rig.strategies.fetch_session.sessionless import Sessionless
from rig.strategies.isr.lag_time import LagTime
from rig.strategies.placement.kafka import KafkaPlacement
from rig.strategies.replication.leader_epoch import LeaderEpoch


def fake_log(emit: Callable[..., None]) -> SimpleNamespace:
    """An event log that hands every event to `emit`, its event kinds' emitters included."""
    return SimpleNamespace(emit=emit, kind=partial(positional, emit))


class FetcherHost:
    """What ReplicaFetcher calls on its host; a subclass adds the leader (broker 0) and `log`."""

    def __init__(self) -> None:
        self.sim = Simulation()
        self.meter = Meter()
        self.network = SimpleNamespace(cuts={})  # no partition: connections are made at once
        self.strategies = Strategies(KafkaPlacement(), LeaderEpoch(), LagTime(), Sessionless())
        self.clients: list[Any] = []
        self.coasting = False
        self.variant = SimpleNamespace(kafka="3.9")  # (the release of its connection timeouts)
        self.streams = Streams(0)
        self.wire: list[tuple[str, Callable[[], None]]] = []

    def send(self, src: Any, dst: Any, nbytes: int, deliver: Callable[[], None], *,
             reliable: bool = False, kind: str = "control") -> None:
        self.wire.append(("to-leader" if dst == 0 else "to-follower", deliver))

    def begin_coast(self, *args: Any) -> bool:
        return False
