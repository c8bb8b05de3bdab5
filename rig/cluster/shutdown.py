"""A controlled shutdown as its fault sees it (rig.faults.kinds.ControlledShutdown): the control
plane calls `stop` when the broker may go, and a heal that comes first restarts the broker
once it has stopped. Either controller kind drives it (rig.cluster.controlled_shutdown for
ZooKeeper mode, the broker lifecycle manager in KRaft)."""

from __future__ import annotations

from typing import Any


class ShutdownHandle:
    """One controlled shutdown as the fault sees it: the control plane calls `stop` when the
    broker may go (`controlled`: it was let go; False: it gave up asking), and a heal that
    comes first restarts the broker once it has stopped."""

    def __init__(self, cluster: Any, broker: Any):
        self.cluster = cluster
        self.broker = broker
        self.incarnation = broker.incarnation
        self.stopped = False
        self.restart_when_stopped = False

    def stop(self, controlled: bool = True) -> None:
        if self.stopped or self.broker.incarnation != self.incarnation:
            return
        self.cluster.crash(self.broker.id, False, shutdown=controlled)
        self.stopped = True
        if self.restart_when_stopped:
            self.cluster.restart(self.broker.id)

    def heal(self) -> None:
        if self.stopped:
            self.cluster.restart(self.broker.id)
        else:
            self.restart_when_stopped = True
