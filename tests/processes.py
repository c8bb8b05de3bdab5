"""The processes a `rig` subprocess started, read from Linux's /proc: for tests that stop a run
(or kill one of its workers) and check that nothing outlives it."""

from __future__ import annotations

import time
from pathlib import Path


def descendants(pid: int) -> set[int]:
    """Every descendant of `pid`."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        here = todo.pop()
        for task in Path(f"/proc/{here}/task").glob("*"):
            try:
                kids = (task / "children").read_text().split()
            except OSError:
                continue
            for kid in map(int, kids):
                if kid not in found:
                    found.add(kid)
                    todo.append(kid)
    return found


def alive(pid: int) -> bool:
    """Running, not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def forkserver_workers(pid: int) -> set[int]:
    """The worker processes under `pid`: the children of its multiprocessing forkserver."""
    under = descendants(pid)
    servers = {p for p in under if b"multiprocessing.forkserver" in _cmdline(p)}
    return {p for p in under if _parent(p) in servers}


def wait_gone(pids: set[int], seconds: float = 10) -> set[int]:
    """Wait up to `seconds` for `pids` to end; those still alive."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(map(alive, pids)):
        time.sleep(0.1)
    return {p for p in pids if alive(p)}
