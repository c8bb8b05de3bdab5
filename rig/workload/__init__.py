"""The workload: producers now (consumers follow), each a client node of the cluster."""

from rig.workload.producer import Producer

__all__ = ["Producer"]
