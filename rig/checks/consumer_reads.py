"""What consumers read against the final committed log, judged at the end, after the run
settled, from `consumer.read` events.

- consumed-records-stay: a consumer never reads a record that later disappears. Consumers
  read only below the high watermark, so whatever one read must still be in the final
  committed log at the same offset: the partition's leader holds the same batch (by identity)
  there, below its HW, unless retention or the cleaner removed it since. An unclean election,
  or a broker serving consumers past the HW, breaks that.
- consumers-skip-nothing: a group reads every committed record its position passed. Between
  the first batch a group read of a partition and the end of the last one (the position it
  ended at), every batch of the final committed log was read by it. An unclean election a
  consumer does not detect breaks that (before 2.3 it fetches on from its position in the new
  leader's log, KIP-320), and so does auto.offset.reset to `latest` past records not read yet.
  Each partition with such batches is a `consumer.skipped` finding.
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
                if now is None and (end <= replica.log_start_offset
                                    or replica.removed((producer, sequence))):
                    continue  # retention or the cleaner removed it since: by policy, not lost
                self._violate(True, topic=key[0], partition=key[1], offset=base,
                              records=end - base, id=[producer, sequence], client=client,
                              read_at_ms=at_ms, leader=final.partitions[key].leader,
                              final_hw=replica.high_watermark,
                              final_id=list(now) if now else None,
                              message="a consumer read this batch, then it left the "
                                      "committed log")
        return self.found


class _Span:
    """What one group read of one partition: the batches (by identity), the lowest base
    offset read, and where its last read ended (its position then)."""

    __slots__ = ("first", "last", "read")

    def __init__(self, first: int):
        self.first = first
        self.last = first
        self.read: set[tuple[int, int]] = set()


class ConsumersSkipNothing(_Base):
    name = "consumers-skip-nothing"
    events = frozenset({names.CONSUMER_READ})

    def __init__(self) -> None:
        super().__init__()
        self.spans: dict[tuple[str, str, int], _Span] = {}  # (group, topic, partition)

    def observe(self, event: Mapping[str, Any]) -> None:
        if event["event"] != names.CONSUMER_READ:
            return
        batches = event["batches"]
        key = (event["group"], event["topic"], event["partition"])
        span = self.spans.get(key)
        if span is None:
            span = self.spans[key] = _Span(batches[0][0])
        span.first = min(span.first, batches[0][0])
        span.last = batches[-1][1]
        span.read.update((producer, sequence) for _, _, producer, sequence in batches)

    def finish(self, final: FinalState) -> list[Finding]:
        for (group, topic, partition), span in sorted(self.spans.items()):
            replica = self._final_leader(final, (topic, partition))
            if replica is None:
                continue
            limit = min(span.last, replica.high_watermark)
            skipped = [(base, end) for base, end, identity in replica.batches()
                       if base >= span.first and end <= limit and identity not in span.read]
            if not skipped:
                continue
            details = dict(group=group, topic=topic, partition=partition,
                           offset=skipped[0][0], end_offset=skipped[-1][1],
                           records=sum(end - base for base, end in skipped),
                           batches=len(skipped), leader=final.partitions[(topic, partition)].leader)
            self.found.append((names.CONSUMER_SKIPPED, details))
            self._violate(True, **details, message="committed records a consumer group's "
                                                   "position passed without reading them")
        return self.found
