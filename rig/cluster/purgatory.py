"""A waiting room for operations that cannot finish yet (Kafka's DelayedOperationPurgatory).

An operation is watched under one or more keys. Whoever changes what a key stands for calls
`check_and_complete(key)`: every operation watched there is asked to `try_complete()`, and one
that finishes is forgotten under all its keys. An operation whose time runs out is `expire()`d
by its own timer and then leaves with `forget`. Watchers of a key are asked in the order they
came, so a run is reproducible. Nothing here knows what an operation waits for.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Generic, Protocol, TypeVar


class DelayedOperation(Protocol):
    """What the purgatory asks of a waiting operation."""

    def try_complete(self) -> bool:
        """Finish now if the operation can (answering whoever waits); True if it finished."""
        ...

    def expire(self) -> None:
        """Its time ran out: finish with what there is."""
        ...


class AbortableOperation(DelayedOperation, Protocol):
    """An operation that can lose one of its keys for good (what it waited for there will
    not come)."""

    def abort(self, key: Hashable, error: int) -> bool:
        """`key` ends with `error`; True if that finished the operation."""
        ...


K = TypeVar("K", bound=Hashable)
Op = TypeVar("Op", bound=DelayedOperation)
A = TypeVar("A", bound=AbortableOperation)


class Purgatory(Generic[K, Op]):
    """Operations of one kind, each watched under its keys."""

    def __init__(self) -> None:
        self._watchers: dict[K, list[Op]] = {}
        self._keys: dict[Op, tuple[K, ...]] = {}

    def watch(self, keys: Iterable[K], op: Op) -> None:
        """Watch `op` under every key of `keys` (after those already watched there)."""
        keys = tuple(keys)
        self._keys[op] = self._keys.get(op, ()) + keys
        for key in keys:
            watchers = self._watchers.get(key)
            if watchers is None:
                self._watchers[key] = [op]
            else:
                watchers.append(op)

    def watched(self, key: K) -> list[Op]:
        """The operations watched under `key`, oldest first (a copy)."""
        return list(self._watchers.get(key, ()))

    def is_watched(self, op: Op) -> bool:
        return op in self._keys

    def check_and_complete(self, key: K) -> int:
        """Ask every operation watched under `key` to finish; those that did leave every key.
        Returns how many finished."""
        watchers = self._watchers.get(key)
        if not watchers:
            return 0
        done = 0
        for op in list(watchers):
            if op in self._keys and op.try_complete():
                done += 1
                self.forget(op)
        return done

    def forget(self, op: Op) -> None:
        """Stop watching `op` under any key (nothing if it is not watched)."""
        for key in self._keys.pop(op, ()):
            watchers = self._watchers.get(key)
            if watchers is not None and op in watchers:
                watchers.remove(op)
                if not watchers:
                    del self._watchers[key]

    def take(self, key: K) -> list[Op]:
        """Stop watching anything under `key`; the operations that were watched there (each
        stays watched under its other keys)."""
        taken = self._watchers.pop(key, [])
        for op in taken:
            rest = tuple(k for k in self._keys.get(op, ()) if k != key)
            if rest:
                self._keys[op] = rest
            else:
                self._keys.pop(op, None)
        return taken

    def abort(self: Purgatory[K, A], key: K, error: int) -> None:
        """What the operations watched under `key` wait for there will not come: each is told
        (`abort`) and stops watching `key`; one that finished so leaves every key."""
        for op in self.take(key):
            if op.abort(key, error):
                self.forget(op)

    def clear(self) -> list[Op]:
        """Forget everything (the process died); every operation that was watched, once."""
        ops = list(self._keys)
        self._watchers.clear()
        self._keys.clear()
        return ops

    def __len__(self) -> int:
        """How many operations are watched."""
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        """Whether some operation is watched under `key`."""
        return key in self._watchers
