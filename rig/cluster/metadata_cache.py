"""A broker's view of who leads each partition and its ISR, which brokers are alive and which
one is the controller, as UpdateMetadata last said (Kafka's ZkMetadataCache; docs/kafka.md §10)."""

from __future__ import annotations

from rig.cluster.context import Emit
from rig.cluster.partition import TopicPartition
from rig.events import names


class MetadataCache:
    """Leaders and ISRs as last told; a change of a partition's cached state is an event."""

    def __init__(self, broker_id: int, emit: Emit):
        self.broker_id = broker_id
        self._emit = emit
        self.leaders: dict[TopicPartition, int] = {}  # partition → leader, as last told
        self.isrs: dict[TopicPartition, tuple[int, ...]] = {}  # partition → ISR, as told
        # partition → leader epoch, as told (UpdateMetadata v7+ and MetadataResponse v7+ carry
        # it, KIP-320: what a 2.3+ consumer compares its position's leader epoch with)
        self.epochs: dict[TopicPartition, int] = {}
        self._shared = False  # the three still the start-up maps every broker holds
        # UpdateMetadataRequest's live brokers (the controller's liveOrShuttingDownBrokers)
        # and controllerId: what getAliveBroker / hasAliveBroker and getControllerId answer.
        self.alive: frozenset[int] = frozenset()
        self.controller_id: int | None = None

    def update(self, leaders: dict[TopicPartition, int],
               isrs: dict[TopicPartition, tuple[int, ...]] | None = None,
               quiet: bool = False, epochs: dict[TopicPartition, int] | None = None) -> None:
        """Take the listed partitions' leaders (and ISRs, leader epochs); emit
        `metadata.updated` for each partition whose leader or ISR changed (cost follows
        change; an epoch alone is not an event).

        The start-up UpdateMetadata (`quiet`, to an empty cache; `isrs` and `epochs`, if given,
        list the partitions of `leaders`) is kept as it is, not copied: every broker of a large
        cluster then holds the same maps until its first later UpdateMetadata, which copies
        them. The caller must not change them."""
        if quiet and not self.leaders and (isrs is None or len(isrs) == len(leaders)) and (
                epochs is None or len(epochs) == len(leaders)):
            self.leaders = leaders
            if isrs is not None:
                self.isrs = isrs
            if epochs is not None:
                self.epochs = epochs
            self._shared = True
            return
        if self._shared:
            self.leaders = dict(self.leaders)
            self.isrs = dict(self.isrs)
            self.epochs = dict(self.epochs)
            self._shared = False
        if epochs is not None:
            self.epochs.update(epochs)
        for key, leader in leaders.items():
            isr = isrs.get(key) if isrs is not None else None
            changed = self.leaders.get(key) != leader or (
                isr is not None and self.isrs.get(key) != isr)
            self.leaders[key] = leader
            if isr is not None:
                self.isrs[key] = isr
            if changed and not quiet:
                self._emit(names.METADATA_UPDATED, broker=self.broker_id, topic=key[0],
                           partition=key[1], leader=leader, isr=list(self.isrs.get(key, ())))

    def brokers(self, alive: frozenset[int], controller: int) -> None:
        """The live brokers and the controller an UpdateMetadata names (each one names all)."""
        self.alive = alive
        self.controller_id = controller

    def has_alive_broker(self, broker: int) -> bool:
        """ZkMetadataCache.hasAliveBroker: `broker` is among the live brokers last told."""
        return broker in self.alive

    def reset(self) -> None:
        """A crash: the ISRs, the live brokers and the controller are forgotten until the next
        UpdateMetadata refills them (the leaders stay, as the process's last word, for clients
        asking before then)."""
        self.isrs = {}
        self.alive = frozenset()
        self.controller_id = None
