"""Reliable messages between two Kafka processes arrive in the order they were sent.

The transport tries a reliable message again every RESEND_MS on its own while a cut holds it
(rig.cluster.transport), so a later one can get through first. The controller's channel to a
broker sends its requests one after another (ControllerChannelManager.RequestSendThread: one
in flight, retried until it gets through), so the broker takes them in order: an older
UpdateMetadata never overwrites a newer one. Here each message of a conversation (both ends,
as the processes they are) gets the next sequence number and is delivered only after every
message numbered before it; a restart at either end begins a new conversation.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

Conversation = tuple[object, object, int, int]  # source, destination and their incarnations


class InOrder:
    """Per conversation: the next number to give, the next to deliver, and those held."""

    __slots__ = ("_delivered", "_held", "_numbers")

    def __init__(self) -> None:
        self._numbers: dict[Conversation, int] = {}
        self._delivered: dict[Conversation, int] = {}
        self._held: dict[Conversation, dict[int, Callable[[], None]]] = {}

    def wrap(self, conversation: Conversation, deliver: Callable[[], None]
             ) -> Callable[[], None]:
        """`deliver`, to run once everything sent before it in `conversation` has run. Only
        for a message sent while both ends live: one to or from a dead process never
        arrives, and would hold back everything after it."""
        number = self._numbers.get(conversation, 0)
        self._numbers[conversation] = number + 1
        return partial(self._arrived, conversation, number, deliver)

    def _arrived(self, conversation: Conversation, number: int,
                 deliver: Callable[[], None]) -> None:
        expected = self._delivered.get(conversation, 0)
        if number != expected:
            self._held.setdefault(conversation, {})[number] = deliver
            return
        deliver()
        expected += 1
        held = self._held.get(conversation)
        while held and expected in held:
            held.pop(expected)()
            expected += 1
        self._delivered[conversation] = expected


__all__ = ["Conversation", "InOrder"]
