"""The fetch-session contract, checked three ways: the cache and the client driven directly
through KIP-227's state machine, short simulated runs of the real model (idle, and with fewer
cache slots than fetchers), and the same run twice giving a byte-identical event log."""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rig.strategies import registry
from rig.strategies.fetch_session.base import (
    FETCH_SESSION_ID_NOT_FOUND,
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_FETCH_SESSION_EPOCH,
    NONE,
    SessionContext,
    SessionRequest,
    next_epoch,
)
from rig.testing._common import ConformanceError, Report, create, static_problems
from rig.testing._model import run_model

CACHE_SLOTS = 2
FETCH_VERSION = 11  # Kafka 2.3+: sessions, and the codec's ordinary shape


def _parts(tag: str, n: int) -> dict[Any, None]:
    return {(tag, p): None for p in range(n)}


def _check_cache(instance: Any, problems: list[str]) -> bool:
    """Drive one cache through full fetches, errors and epochs; True if it created sessions."""
    case = f"[cache, {CACHE_SLOTS} slots]"
    cache = instance.new_cache(0, CACHE_SLOTS, random.Random(7))
    live: set[int] = set()
    created: list[tuple[int, dict[Any, None]]] = []
    for i in range(2 * CACHE_SLOTS + 1):
        parts = _parts(f"f{i}", 3 + i)
        context = cache.open(SessionRequest(0, INITIAL_EPOCH, full=True), parts,
                             privileged=i % 2 == 0, now_ms=float(i))
        if not isinstance(context, SessionContext):
            problems.append(f"{case} open returned a {type(context).__name__}, expected a "
                            "SessionContext")
            return False
        for gone in context.evicted:
            if gone not in live:
                problems.append(f"{case} reports evicting session {gone}, which it did not hold")
            live.discard(gone)
        if context.created:
            if context.session_id == 0 or context.session_id in live:
                problems.append(f"{case} created session id {context.session_id}: ids must be "
                                "non-zero and unique among live sessions")
            live.add(context.session_id)
            created.append((context.session_id, parts))
        held = cache.occupancy()
        if held > CACHE_SLOTS:
            problems.append(f"{case} holds {held} sessions after {i + 1} full fetches: more "
                            "than its slots")
        if held != len(live):
            problems.append(f"{case} occupancy() is {held} but it created {len(live)} sessions "
                            "it did not report evicting (list every eviction in `evicted`)")
    sessionless = cache.open(SessionRequest(0, FINAL_EPOCH, full=True), _parts("s", 2),
                             privileged=True, now_ms=10.0)
    if sessionless.session_id != 0 or sessionless.created:
        problems.append(f"{case} a full fetch with epoch {FINAL_EPOCH} must stay sessionless "
                        f"(session id 0), got session {sessionless.session_id}")
    if not created:
        return False
    unknown = max(live | {0}) + 1
    context = cache.open(SessionRequest(unknown, 1, full=False, listed={}), {}, True, 11.0)
    if context.error_code != FETCH_SESSION_ID_NOT_FOUND:
        problems.append(f"{case} an incremental fetch for unknown session {unknown} answered "
                        f"error {context.error_code}, expected FETCH_SESSION_ID_NOT_FOUND "
                        f"({FETCH_SESSION_ID_NOT_FOUND})")
    alive = [(sid, parts) for sid, parts in created if sid in live]
    if alive:
        sid, parts = alive[-1]
        wrong = cache.open(SessionRequest(sid, 5, full=False, listed={}), {}, True, 12.0)
        if wrong.error_code != INVALID_FETCH_SESSION_EPOCH:
            problems.append(f"{case} epoch 5 for session {sid}, which expects 1, answered error "
                            f"{wrong.error_code}, expected INVALID_FETCH_SESSION_EPOCH "
                            f"({INVALID_FETCH_SESSION_EPOCH})")
        epoch = 1
        for step in range(3):
            right = cache.open(SessionRequest(sid, epoch, full=False, listed={}), {}, True,
                               13.0 + step)
            if right.error_code != NONE or right.session_id != sid:
                problems.append(f"{case} epoch {epoch} of session {sid} answered error "
                                f"{right.error_code}, session {right.session_id}: epochs go "
                                "1, 2, 3 … after the full fetch that created the session")
                break
            epoch = next_epoch(epoch)
    cache.clear()
    if cache.occupancy() != 0:
        problems.append(f"{case} still holds {cache.occupancy()} sessions after clear()")
    return True


def _check_client(instance: Any, problems: list[str]) -> None:
    """Drive one client through KIP-227: full first, then epochs 1, 2 …, full after errors."""
    case = "[client]"
    client = instance.new_client()
    parts = _parts("t", 4)

    def ask(partitions: dict[Any, None], dirty: dict[Any, None], what: str) -> SessionRequest:
        request = client.next_request(partitions, dirty, FETCH_VERSION)
        if not isinstance(request, SessionRequest):
            raise _Stop(f"{case} {what}: next_request returned a {type(request).__name__}, "
                        "expected a SessionRequest")
        if not request.full and request.listed is None:
            raise _Stop(f"{case} {what}: an incremental request must carry `listed`")
        return request

    try:
        first = ask(parts, dict(parts), "first request")
        if not first.full:
            problems.append(f"{case} the first request must be a full fetch (there is no "
                            "session yet)")
            return
        client.on_response(first, NONE, 777)
        second = ask(parts, {}, "after the full fetch that created session 777")
        if second.full:
            return  # a client that never uses sessions: nothing more to sequence
        if (second.session_id, second.epoch) != (777, 1):
            problems.append(f"{case} after session 777 was created, the next request is "
                            f"(session {second.session_id}, epoch {second.epoch}), expected "
                            "(777, 1)")
            return
        client.on_response(second, NONE, 777)
        moved = dict(parts)
        del moved[("t", 0)]
        moved[("u", 0)] = None
        third = ask(moved, {("t", 0): None, ("t", 1): None, ("u", 0): None},
                    "after a partition was added, one removed and one changed")
        if (third.session_id, third.epoch) != (777, 2) and not third.full:
            problems.append(f"{case} the second incremental request is (session "
                            f"{third.session_id}, epoch {third.epoch}), expected (777, 2)")
        if not third.full:
            listed = third.listed or {}
            missing = [k for k in (("t", 1), ("u", 0)) if k not in listed]
            if missing:
                problems.append(f"{case} an incremental request must list the partitions that "
                                f"are new or changed; it left out {missing}")
            if ("t", 0) not in third.forgotten:
                problems.append(f"{case} an incremental request must forget the partitions no "
                                "longer fetched; it kept ('t', 0)")
            if any(k not in moved for k in listed):
                problems.append(f"{case} listed partitions the fetcher does not fetch")
        client.on_response(third, FETCH_SESSION_ID_NOT_FOUND, 0)
        if not ask(moved, {}, "after FETCH_SESSION_ID_NOT_FOUND").full:
            problems.append(f"{case} after FETCH_SESSION_ID_NOT_FOUND the next request must be a "
                            "full fetch")
        fresh = ask(moved, {}, "re-creating the session")
        client.on_response(fresh, NONE, 778)
        client.on_disconnect()
        if not ask(moved, {}, "after a disconnection").full:
            problems.append(f"{case} after a disconnection the next request must be a full fetch")
    except _Stop as stop:
        problems.append(str(stop))


class _Stop(Exception):
    pass


IDLE = "idle: 3 brokers in 3 racks, 29 partitions, 2 fetchers per broker pair, 60 s"
PRESSURE = "slot pressure: the same with 1 cache slot per broker, 3 simulated minutes"


def _scenario(strategy: str, options: dict[str, Any], version: int, slots: int,
              duration: str) -> dict[str, Any]:
    return {
        "name": "rig-testing-fetch-session",
        "seed": 11,
        "duration": duration,
        "kafka": "2.4",
        "protocol": {"fetch_version": version},
        "cluster": {"brokers": [{"id": 0, "rack": "a"}, {"id": 1, "rack": "b"},
                                {"id": 2, "rack": "c"}],
                    "config": {"num.replica.fetchers": 2,
                               "max.incremental.fetch.session.cache.slots": slots}},
        "topics": [{"name": "big", "partitions": 24, "replication_factor": 3},
                   {"name": "small", "partitions": 5, "replication_factor": 2}],
        "strategies": {"placement": "kafka",
                       "fetch_session": {"name": strategy, "options": options} if options
                       else strategy},
    }


def _sequence_problems(events: list[dict[str, Any]], case: str) -> list[str]:
    """Incremental requests must continue the session the client was given, epoch by epoch."""
    problems: list[str] = []
    # A fetcher is its client id and the broker it fetches from (client ids repeat per leader).
    given: dict[tuple[Any, Any], tuple[int, int]] = {}  # → (session id, next epoch) it may send
    pending: dict[tuple[Any, Any], dict[str, Any]] = {}  # → its request in flight
    for event in events:
        name, client = event["event"], (event.get("client"), event.get("broker"))
        if name == "fetch.request" and event.get("role") == "follower":
            pending[client] = event
            if event["full"]:
                continue
            expected = given.get(client)
            got = (event["session_id"], event["session_epoch"])
            if expected is None or got != expected:
                problems.append(f"{case} t={event['t_ms']} ms: {client[0]} sent broker "
                                f"{client[1]} an incremental "
                                f"request (session {got[0]}, epoch {got[1]}), expected "
                                + (f"(session {expected[0]}, epoch {expected[1]})" if expected
                                   else "a full fetch (it holds no session)"))
                if len(problems) >= 5:
                    break
        elif name == "fetch.response" and event.get("role") == "follower" and client in pending:
            request = pending.pop(client)
            if event["error_code"] != NONE or event["session_id"] == 0:
                given.pop(client, None)
            elif request["full"]:
                given[client] = (event["session_id"], 1)
            else:
                given[client] = (event["session_id"], next_epoch(request["session_epoch"]))
    return problems


def _violation(violation: dict[str, Any]) -> str:
    details = ", ".join(f"{k} {v}" for k, v in violation.items() if k not in ("message", "seq"))
    return f"{violation.get('message', 'violation')} ({details})"


def _simulate(name: str, options: dict[str, Any], version: int, slots: int, duration: str,
              tmp: Path, label: str) -> tuple[bytes | None, list[str]]:
    """Run the model; the event log's bytes and the problems found."""
    case = f"[{IDLE if slots > 1 else PRESSURE}]"
    run, stopped = run_model(_scenario(name, options, version, slots, duration), tmp, label,
                             case)
    if run is None:
        return None, stopped
    checks = run.checks.values()
    problems = [f"{case} {c.name} check {c.status.value}: {_violation(v)}"
                for c in checks if c.status.value != "ok" for v in c.violations[:3]]
    problems += [f"{case} {c.name} check {c.status.value}: {c.note}"
                 for c in checks if c.status.value != "ok" and not c.violations]
    problems += _sequence_problems(run.events, case)
    return run.log, problems


def check_fetch_session(cls: Any, **options: Any) -> Report:
    """Check a fetch-session strategy class against the fetch_session contract; raise
    ConformanceError listing every problem, or return what was checked.

    1. The cache alone: sessions created up to its slots, evictions reported, non-zero unique
       ids, FETCH_SESSION_ID_NOT_FOUND and INVALID_FETCH_SESSION_EPOCH where KIP-227 says.
    2. The client alone: a full fetch first, then epochs 1, 2 …; new and changed partitions
       listed, removed ones forgotten; a full fetch after an error or a disconnection.
    3. The real model on an idle cluster, and again with one cache slot per broker: the
       fetch-session check passes, every incremental request continues its session's epochs,
       and the cache never exceeds its slots (the run-time guard stops the run if it does).
    4. The idle run twice: byte-identical event logs (all randomness from the given rng).
    """
    problems = static_problems("fetch_session", cls)
    if problems:
        raise ConformanceError("fetch_session", cls, problems)
    report = Report("fetch_session", str(getattr(cls, "name", cls.__qualname__)))
    steps: list[tuple[str, Callable[[Any, list[str]], Any]]] = [
        (f"the cache alone, {CACHE_SLOTS} slots", _check_cache),
        ("the client alone, through KIP-227's states", _check_client)]
    for label, step in steps:
        instance, trouble = create("fetch_session", cls, options)
        if instance is None:
            raise ConformanceError("fetch_session", cls, trouble)
        try:
            step(instance, problems)
        except Exception as exc:
            problems.append(f"[{label}] raised {registry.describe_exception(exc)}")
        report.cases.append(label)
    version = max(FETCH_VERSION, int(getattr(cls, "min_fetch_version", 0)))
    with tempfile.TemporaryDirectory(prefix="rig-testing-") as tmp, \
            registry.temporarily("fetch_session", cls) as name:
        first, found = _simulate(name, options, version, 1000, "60s", Path(tmp), "idle")
        problems += found
        again, _ = _simulate(name, options, version, 1000, "60s", Path(tmp), "idle-again")
        if first is not None and again is not None and first != again:
            problems.append(f"[{IDLE}] not deterministic: the same run twice wrote different "
                            "event logs (take all randomness from the cache's rng, never from "
                            "the global random, set order, id() or the clock)")
        problems += _simulate(name, options, version, 1, "3m", Path(tmp), "pressure")[1]
    report.cases += [IDLE, PRESSURE, "the idle run twice, byte for byte"]
    if problems:
        raise ConformanceError("fetch_session", cls, problems)
    return report
