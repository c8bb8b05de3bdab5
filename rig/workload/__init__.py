"""The workload: producers and consumer groups, each member a client node of the cluster."""

from rig.workload.consumer_group import ConsumerGroup
from rig.workload.producer import Producer

__all__ = ["ConsumerGroup", "Producer"]
