"""Controller kinds: the control plane a cluster runs (ZooKeeper, or KRaft's quorum)."""

from rig.strategies.controller.base import ControllerStrategy, ControlPlane

__all__ = ["ControlPlane", "ControllerStrategy"]
