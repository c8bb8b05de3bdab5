"""A consumer never reads a record that later disappears.

Consumers read only below the high watermark, so whatever one read must still be in the final
committed log at the same offset: the partition's leader holds the same batch (by identity)
there, below its HW. An unclean election, or a broker serving consumers past the HW, breaks
that. Reads come from `consumer.read` events; judged at the end, after the run settled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rig.checks.base import Finding
from rig.checks.safety import _Base
from rig.events import names

if TYPE_CHECKING:
    from rig.cluster.final_state import FinalState

Read = tuple[int, int, int, int]  # base offset, end offset, producer, sequence


class ConsumedRecordsStay(_Base):
    name = "consumed-records-stay"
    events = frozenset({names.CONSUMER_READ})

    def __init__(self) -> None:
        super().__init__()
        # Per partition, each batch once (first reader and time), however many groups read it.
        self.reads: dict[tuple[str, int], dict[Read, tuple[str, float]]] = {}

    def observe(self, event: Mapping[str, Any]) -> None:
        if event["event"] != names.CONSUMER_READ:
            return
        seen = self.reads.setdefault((event["topic"], event["partition"]), {})
        for base, end, producer, sequence in event["batches"]:
            seen.setdefault((base, end, producer, sequence), (event["client"], event["t_ms"]))

    def finish(self, final: FinalState) -> list[Finding]:
        for key, reads in sorted(self.reads.items()):
            replica = self._final_leader(final, key)
            if replica is None:
                continue
            for (base, end, producer, sequence), (client, at_ms) in sorted(reads.items()):
                now = replica.identity_at(base)
                if end <= replica.high_watermark and now == (producer, sequence):
                    continue
                self._violate(True, topic=key[0], partition=key[1], offset=base,
                              records=end - base, id=[producer, sequence], client=client,
                              read_at_ms=at_ms, leader=final.partitions[key].leader,
                              final_hw=replica.high_watermark,
                              final_id=list(now) if now else None,
                              message="a consumer read this batch, then it left the "
                                      "committed log")
        return self.found
