"""The replication contract's rules on one decision, shared by the kit's cases
(_replication.py) and its run of the real model (_replication_run.py)."""

from __future__ import annotations

from typing import Any

from rig.strategies.replication.base import FollowerView, TruncateTo

UNDEFINED = -1


class _Stop(Exception):
    """A case cannot go on: already reported."""


def _check_question(tag: str, view: FollowerView, own_epochs: str, asked: Any,
                    previous: int | None, problems: list[str]) -> None:
    if not isinstance(asked, int) or isinstance(asked, bool):
        problems.append(f"{tag} AskLeader({asked!r}): the epoch must be an int")
        raise _Stop
    if not 0 <= asked <= view.latest_epoch:
        problems.append(f"{tag} asked the leader about epoch {asked}, but {own_epochs}: "
                        "OffsetsForLeaderEpoch asks where one of the follower's own epochs "
                        "ends (docs/kafka.md §9)")
        raise _Stop
    if previous is not None and asked >= previous:
        problems.append(f"{tag} asked about epoch {asked} after the answer about epoch "
                        f"{previous}: each new question must ask an older epoch (KIP-279 "
                        "walks back), or the same answer comes back for ever")
        raise _Stop


def _check_truncation(tag: str, view: FollowerView, log_start: int, decision: TruncateTo,
                      answer: tuple[int, int] | None, problems: list[str]) -> None:
    offset = decision.offset
    if not isinstance(offset, int) or isinstance(offset, bool):
        problems.append(f"{tag} TruncateTo({offset!r}): the offset must be an int")
        return
    leo = view.log_end_offset
    if offset > leo:
        problems.append(f"{tag} truncates to {offset}, above the follower's LEO {leo}: a "
                        "truncation offset is never above the LEO (the model clamps it)")
    if offset < 0:
        problems.append(f"{tag} truncates to {offset}: offsets are never negative")
    elif offset < log_start:
        problems.append(f"{tag} truncates to {offset}, below the follower's log start offset "
                        f"{log_start}: retention deleted what lies below it, and its HW "
                        f"({view.high_watermark}) and the leader's answers are all at or above "
                        "it")
    if answer is not None and answer[0] != UNDEFINED and answer[1] != UNDEFINED \
            and offset > answer[1]:
        problems.append(f"{tag} truncates to {offset} after the leader said its epoch "
                        f"{answer[0]} ends at {answer[1]}: a follower truncates to min(the "
                        "leader's end offset, its LEO) (docs/kafka.md §9); what lies past it "
                        "is not the leader's")
