"""A log's leader-epoch cache: (epoch, start offset) pairs, ascending (Kafka's
LeaderEpochFileCache; KIP-101, KIP-279). `Log` holds it and keeps it in step with its end
(appends add epochs, truncation drops those starting at or after the new end)."""

from __future__ import annotations

from typing import TYPE_CHECKING

UNDEFINED = -1


class LeaderEpochCache:
    __slots__ = ("_epochs",)

    _epochs: list[tuple[int, int]] | None  # made on first use: most logs are never led
    if TYPE_CHECKING:
        log_end_offset: int

    @property
    def epochs(self) -> list[tuple[int, int]]:
        """The leader-epoch cache: (epoch, start offset), ascending."""
        epochs = self._epochs
        if epochs is None:
            epochs = self._epochs = []
        return epochs

    def assign_epoch(self, epoch: int) -> None:
        """A new leader records its epoch's start offset before it appends (Kafka does this on
        becoming leader, so an epoch with no data still has a start)."""
        epochs = self.epochs
        if not epochs or epoch > epochs[-1][0]:
            epochs.append((epoch, self.log_end_offset))

    def truncate_epochs_from_end(self) -> None:
        """LeaderEpochFileCache.truncateFromEnd(log end): drop the epochs that start at or
        after the log end (an epoch a leader recorded but never appended to)."""
        epochs = self._epochs
        while epochs and epochs[-1][1] >= self.log_end_offset:
            epochs.pop()

    def truncate_epochs_from_start(self, log_start: int) -> None:
        """LeaderEpochFileCache.truncateFromStart(log start) (clearAndFlushEarliest in 0.11–
        1.x), when the log start moves up: the epochs starting at or below it go, the last of
        them kept as starting at the log start. An epoch older than every one left is then
        answered with the log start (end_offset_for_epoch), not with where it really ended."""
        epochs = self._epochs
        if not epochs or epochs[0][1] >= log_start:
            return
        last = 0
        while last + 1 < len(epochs) and epochs[last + 1][1] <= log_start:
            last += 1
        epochs[:last + 1] = [(epochs[last][0], log_start)]

    @property
    def latest_epoch(self) -> int:
        epochs = self._epochs  # read without making the cache of a log never written
        return epochs[-1][0] if epochs else UNDEFINED

    def end_offset_for_epoch(self, epoch: int,
                             before_first: str = "first-start") -> tuple[int, int]:
        """What OffsetsForLeaderEpoch answers for `epoch` (LeaderEpochFileCache.endOffsetFor):

        - the latest epoch: (epoch, LEO);
        - newer than every known epoch, or none known: (−1, −1);
        - older than every known epoch: (epoch, start of the first known one) from Kafka 2.0;
          with `before_first="undefined"` (0.11–1.1) (−1, −1), and the follower truncates to
          its high watermark;
        - otherwise (largest epoch ≤ asked, start of the next epoch) — KIP-279.
        """
        epochs = self._epochs
        if epoch == UNDEFINED or not epochs:
            return UNDEFINED, UNDEFINED
        if epoch == epochs[-1][0]:
            return epoch, self.log_end_offset
        higher = next((i for i, (e, _) in enumerate(epochs) if e > epoch), None)
        if higher is None:
            return UNDEFINED, UNDEFINED
        if higher == 0:
            return (UNDEFINED, UNDEFINED) if before_first == "undefined" else (epoch, epochs[0][1])
        return epochs[higher - 1][0], epochs[higher][1]
