"""What every part of a consumer member reads of it (rig.workload.consumer.ConsumerMember): its
identity, its Fetch version and its positions. The fetcher, the offset fetcher and the
committer each extend it with what they call on the member."""

from __future__ import annotations

from typing import Any, Protocol

from rig.cluster.partition import TopicPartition
from rig.scenario.model import ConsumerSpec


class MemberState(Protocol):
    cluster: Any  # rig.cluster.cluster.Cluster
    spec: ConsumerSpec
    node: str
    client_id: str
    version: int  # its Fetch version
    positions: dict[TopicPartition, int]
    position_epochs: dict[TopicPartition, int | None]  # the epoch each position was read at


__all__ = ["MemberState"]
