"""The ISR contract, checked by driving a strategy as a leader does (rig/cluster/broker.py): a
FollowerProgress per follower, `on_fetch` for each fetch, `may_join` right after it for a follower
outside the ISR, and `out_of_sync` from the `isr-expiration` task every `check_interval_ms`.

Every rule holds for Kafka's rules of all eras (docs/kafka.md §8 and §10), whatever the
strategy's own rule for "in sync" is:
- the task interval is a positive int, never longer than the lag time (Kafka: lag/2 since 0.9,
  the lag itself in 0.8), or a dead follower holds the ISR, and acks=all producers, for more than
  twice the lag time; an interval of 0 would run the task forever at one instant;
- `on_fetch` records the fetch offset as the follower's LEO (§8: the leader keeps the LEO each
  follower reported in its last fetch; the model's high watermark is the minimum over the ISR);
- a follower that fetched at the leader's LEO is in sync then, and until the lag time has passed
  with the LEO unchanged (Kafka's isFollowerOutOfSync: LEOs differ *and* not caught up for longer
  than the lag time; 0.8: a stuck follower is one not updated for longer than the lag time);
- a follower below the high watermark, or below the start of the leader's epoch, may not join
  (§10: it rejoins when its fetch offset reaches the HW, 2.1+ also the epoch start), and one that
  keeps fetching at the leader's LEO may join, at the latest after ten times the lag time;
- a follower that stops fetching while the leader's LEO moves on leaves the ISR within ten times
  the lag time, and stays out while it stays silent (Kafka's promise that a dead follower cannot
  hold the ISR);
- no call raises; `out_of_sync` and `may_join` answer a bool; the same calls give the same
  answers, on one instance and on a fresh one.
Then the same promises in a short run of the real model (rig/testing/_isr_run.py).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import astuple
from typing import Any

from rig.strategies import registry
from rig.strategies.isr.base import FollowerProgress
from rig.testing._common import ConformanceError, Report, create, static_problems
from rig.testing._isr_run import CASE, check_isr_model

LAG_TIMES = (1, 2, 3, 10, 100, 500, 1_000, 10_000, 30_000, 3_600_000)
DEAD_LAG_TIMES = (10, 1_000, 10_000, 30_000)  # replica.lag.time.max.ms: 10 s ≤ 2.4, 30 s 2.5+
EVENTUALLY = 10  # × the lag time: how long the kit waits for "eventually"
FETCH_EVERY_MS = 100.0  # a live follower's fetch period in the may-join case
LEOS = (0, 1, 1000, 10**9)


class _Stop(Exception):
    """A case cannot go on (the strategy raised or answered nonsense): already reported."""


class _Probe:
    """Calls the strategy as the broker does, records every answer, reports bad ones."""

    def __init__(self, instance: Any, problems: list[str]):
        self.instance = instance
        self.problems = problems
        self.transcript: list[Any] = []

    def _call(self, case: str, what: str, method: str, *args: Any) -> Any:
        try:
            return getattr(self.instance, method)(*args)
        except Exception as exc:
            self.problems.append(f"{case} {what} raised {registry.describe_exception(exc)}")
            raise _Stop from None

    def interval(self, lag_ms: int) -> int | None:
        case = f"[check_interval_ms, lag {lag_ms} ms]"
        value = self._call(case, f"check_interval_ms({lag_ms})", "check_interval_ms", lag_ms)
        self.transcript.append(("interval", lag_ms, value))
        if not isinstance(value, int) or isinstance(value, bool):
            self.problems.append(f"{case} check_interval_ms({lag_ms}) returned "
                                 f"{type(value).__name__} {value!r}, expected an int (ms)")
            return None
        if value <= 0:
            self.problems.append(f"{case} check_interval_ms({lag_ms}) returned {value}: the "
                                 "isr-expiration task needs a positive period (0 would run it "
                                 "forever at one instant)")
            return None
        if value > lag_ms:
            self.problems.append(f"{case} check_interval_ms({lag_ms}) returned {value}, longer "
                                 "than the lag time: Kafka checks every lag/2 (every lag in "
                                 "0.8), so a dead follower leaves within 1.5× the lag time")
        return value

    def fetch(self, case: str, progress: FollowerProgress, offset: int, leo: int,
              now: float) -> None:
        what = f"on_fetch(fetch_offset={offset}, leader_leo={leo}, now_ms={now:g})"
        self._call(case, what, "on_fetch", progress, offset, leo, now)
        self.transcript.append(("fetch", offset, leo, now, astuple(progress)))
        if progress.log_end_offset != offset:
            self.problems.append(f"{case} after {what} the progress records LEO "
                                 f"{progress.log_end_offset}, expected {offset}: the leader "
                                 "keeps the fetch offset as the follower's LEO (docs/kafka.md §8), "
                                 "and the high watermark is computed from it")
            raise _Stop  # the rest of the case would judge a follower the leader cannot see

    def _ask(self, case: str, what: str, method: str, *args: Any) -> bool:
        answer = self._call(case, what, method, *args)
        again = self._call(case, what, method, *args)
        self.transcript.append((method, args[1:], answer))
        if not isinstance(answer, bool):
            self.problems.append(f"{case} {what} returned {type(answer).__name__} {answer!r}, "
                                 "expected a bool")
            raise _Stop
        if again != answer:
            self.problems.append(f"{case} not deterministic: {what} answered {answer}, then "
                                 f"{again} when asked again with nothing changed")
        return answer

    def out(self, case: str, progress: FollowerProgress, leo: int, now: float,
            lag: int) -> bool:
        what = f"out_of_sync(leader_leo={leo}, now_ms={now:g}, lag_time_ms={lag})"
        return self._ask(case, what, "out_of_sync", progress, leo, now, lag)

    def join(self, case: str, progress: FollowerProgress, hw: int, start: int) -> bool:
        what = f"may_join(high_watermark={hw}, epoch_start_offset={start})"
        return self._ask(case, what, "may_join", progress, hw, start)


def _became_leader(now: float, in_isr: bool) -> FollowerProgress:
    """A follower's progress as the broker creates it when it becomes leader."""
    return FollowerProgress(-1, now if in_isr else 0.0, now, 0)


def _check_intervals(probe: _Probe) -> dict[int, int]:
    intervals: dict[int, int] = {}
    for lag in LAG_TIMES:
        try:
            value = probe.interval(lag)
        except _Stop:
            continue
        if value is not None:
            intervals[lag] = value
    return intervals


# (label, in the ISR when the leader took over, history): what the follower did before the case,
# as fetches (offset, leader LEO, time) from a given leader LEO and time span.
Histories = tuple[tuple[str, bool, Callable[[int, float], list[tuple[int, int, float]]]], ...]
HISTORIES: Histories = (
    ("new leader, follower in the ISR, no fetch yet", True, lambda leo, t: []),
    ("new leader, follower outside the ISR, no fetch yet", False, lambda leo, t: []),
    ("follower far behind for a long time", False,
     lambda leo, t: [(0, leo, t * i / 8) for i in range(8)]),
    ("follower that caught up, then fell back", True,
     lambda leo, t: [(leo, leo, 0.0), (leo // 2, leo, t / 2), (0, leo, 3 * t / 4)]),
)


def _replay(probe: _Probe, case: str, in_isr: bool,
            history: list[tuple[int, int, float]]) -> FollowerProgress:
    progress = _became_leader(0.0, in_isr)
    for offset, leo, now in history:
        probe.fetch(case, progress, offset, leo, now)
    return progress


def _check_caught_up(probe: _Probe) -> None:
    """A fetch at the leader's LEO: in sync now, and for the lag time if the LEO stays."""
    for lag in (10, 10_000, 30_000):
        for leo in LEOS:
            for label, in_isr, history in HISTORIES:
                for silent in (0.0, lag / 2, 5.0 * lag, 100.0 * lag):
                    now = silent + 1.0
                    case = f"[caught up: {label}; lag {lag} ms, leader LEO {leo}, at {now:g} ms]"
                    try:
                        progress = _replay(probe, case, in_isr, history(leo, silent))
                        probe.fetch(case, progress, leo, leo, now)
                        for later in (now, now + lag):
                            if probe.out(case, progress, leo, later, lag):
                                probe.problems.append(
                                    f"{case} fetched at the leader's LEO {leo} at {now:g} ms, "
                                    f"yet out_of_sync at {later:g} ms with the LEO unchanged: "
                                    "a follower at the leader's LEO is in sync until the lag "
                                    "time has passed (docs/kafka.md §10)")
                                break
                    except _Stop:
                        continue


def _check_may_join(probe: _Probe) -> None:
    """Never below the HW or the epoch start; eventually, when fetching at the leader's LEO."""
    leo = 100
    for hw in (0, 50, 100):
        for start in (0, 30, 80, 100):
            for label, in_isr, history in HISTORIES[1:]:
                for offset in (0, 29, 49, 50, 79, 80, 99, 100):
                    if offset >= hw and offset >= start:
                        continue
                    case = (f"[may join: {label}; fetch at {offset}, HW {hw}, epoch start "
                            f"{start}, leader LEO {leo}]")
                    try:
                        progress = _replay(probe, case, in_isr, history(leo, 1000.0))
                        probe.fetch(case, progress, offset, leo, 2000.0)
                        if probe.join(case, progress, hw, start):
                            below = (f"the high watermark {hw}" if offset < hw
                                     else f"the leader epoch's start offset {start}")
                            probe.problems.append(
                                f"{case} may_join is true for a follower at {offset}, below "
                                f"{below}: a follower rejoins when its fetch offset reaches the "
                                "HW and (2.1+) the epoch start (docs/kafka.md §10)")
                    except _Stop:
                        continue
            case = (f"[may join: fetching at the leader's LEO {leo} every {FETCH_EVERY_MS:g} ms, "
                    f"HW {hw}, epoch start {start}]")
            lag = 30_000
            try:
                progress = _became_leader(0.0, False)
                now = 0.0
                while now <= EVENTUALLY * lag:
                    probe.fetch(case, progress, leo, leo, now)
                    if probe.join(case, progress, hw, start):
                        break
                    now += FETCH_EVERY_MS
                else:
                    probe.problems.append(
                        f"{case} may_join stayed false for {EVENTUALLY * lag // 1000} s (ten times "
                        "Kafka's 30 s lag time): a follower that reaches the high watermark "
                        "rejoins the ISR (docs/kafka.md §10); the ISR could only ever shrink")
            except _Stop:
                continue


# How the leader's LEO moves after the follower's last fetch: LEO at `t` ms later.
TRAFFIC: tuple[tuple[str, Callable[[int, int, float], int]], ...] = (
    ("one more record, then nothing", lambda leo, lag, t: leo + 1),
    ("a record every lag/10", lambda leo, lag, t: leo + 1 + int(t * 10 // lag)),
    ("a burst of 100000 records", lambda leo, lag, t: leo + 100_000),
)


def _check_dead_follower(probe: _Probe, intervals: dict[int, int]) -> None:
    """A silent follower leaves within ten lag times while the leader's LEO moves on."""
    leo = 1000
    starts: tuple[tuple[str, Callable[[_Probe, str], FollowerProgress]], ...] = (
        ("caught up, then silent", lambda p, c: _caught_up(p, c, leo)),
        ("in the ISR at the leader change, never fetched", lambda p, c: _became_leader(0.0, True)),
        ("fetching behind, then silent", lambda p, c: _fetching_behind(p, c, leo)),
    )
    for lag in DEAD_LAG_TIMES:
        every = intervals.get(lag) or max(1, lag // 2)
        # An over-long interval is reported already: judge the rule. An interval far below
        # lag/20 only repeats the same questions: ask them at most 20 times per lag time.
        every = max(min(every, lag), lag // 20)
        for start_label, start in starts:
            for traffic_label, traffic in TRAFFIC:
                case = f"[dead follower: {start_label}; {traffic_label}; lag {lag} ms]"
                try:
                    progress = start(probe, case)
                    _watch(probe, case, progress, leo, lag, every, traffic)
                except _Stop:
                    continue


def _caught_up(probe: _Probe, case: str, leo: int) -> FollowerProgress:
    progress = _became_leader(0.0, True)
    probe.fetch(case, progress, leo, leo, 0.0)
    return progress


def _fetching_behind(probe: _Probe, case: str, leo: int) -> FollowerProgress:
    progress = _became_leader(0.0, True)
    for i in range(5):
        probe.fetch(case, progress, leo - 5 + i, leo, float(i))
    return progress


def _watch(probe: _Probe, case: str, progress: FollowerProgress, leo: int, lag: int,
           every: int, traffic: Callable[[int, int, float], int]) -> None:
    last_fetch = progress.last_fetch_ms if progress.log_end_offset >= 0 else 0.0
    now = float(every)
    left_at: float | None = None
    deadline = last_fetch + EVENTUALLY * lag
    while now <= deadline:
        leader_leo = traffic(leo, lag, now - last_fetch)
        out = probe.out(case, progress, leader_leo, now, lag)
        if out and left_at is None:
            left_at = now
        elif not out and left_at is not None:
            probe.problems.append(f"{case} out of sync at {left_at:g} ms, back in sync at "
                                  f"{now:g} ms without a fetch: nothing changed in its favour")
            return
        now += every
    if left_at is None:
        probe.problems.append(f"{case} never out of sync in {EVENTUALLY} lag times "
                              f"({EVENTUALLY * lag} ms) without a fetch while the leader's LEO "
                              f"went from {leo} to {traffic(leo, lag, deadline - last_fetch)}: a "
                              "dead follower must leave the ISR (docs/kafka.md §10)")


STEPS: tuple[tuple[str, Callable[[_Probe, dict[int, int]], None]], ...] = (
    ("a follower that fetched at the leader's LEO is in sync",
     lambda probe, intervals: _check_caught_up(probe)),
    ("may_join: never below the HW or the epoch start; eventually at the leader's LEO",
     lambda probe, intervals: _check_may_join(probe)),
    ("a silent follower leaves within ten lag times, and stays out",
     _check_dead_follower),
)


def _battery(instance: Any, problems: list[str]) -> list[Any]:
    probe = _Probe(instance, problems)
    intervals = _check_intervals(probe)
    for _label, step in STEPS:
        step(probe, intervals)
    return probe.transcript


def check_isr(cls: Any, **options: Any) -> Report:
    """Check an ISR strategy class against the isr contract; raise ConformanceError listing
    every problem, or return what was checked.

    1. check_interval_ms: a positive int, at most the lag time, for lag times from 1 ms to 1 h.
    2. A follower that fetched at the leader's LEO is not out of sync then, nor for the lag time
       after if the LEO does not move, whatever it did before (new leader, far behind, fell
       back); every fetch is recorded as the follower's LEO.
    3. may_join is false below the high watermark or the epoch start offset, and true, within
       ten lag times, for a follower fetching at the leader's LEO.
    4. A follower that stops fetching while the leader's LEO moves on (one record, steady
       traffic, a burst) is out of sync within ten lag times, and stays out.
    5. No call raises, out_of_sync and may_join answer bools, a repeated question gets the same
       answer, and a fresh instance (global random reseeded) answers everything the same.
    6. The real model: a follower crashes for 15 lag times under acks=all traffic; each leader
       removes it within ten lag times, it rejoins after its restart (the run ends settled), the
       safety checks pass, and the run twice writes the same event log.
    """
    problems = static_problems("isr", cls)
    if problems:
        raise ConformanceError("isr", cls, problems)
    report = Report("isr", str(getattr(cls, "name", cls.__qualname__)))
    transcripts: list[list[Any]] = []
    for seed in (1, 2):
        instance, trouble = create("isr", cls, options)
        if instance is None:
            raise ConformanceError("isr", cls, trouble)
        random.seed(seed)  # a strategy drawing from the global random diverges between runs
        found: list[str] = []
        transcripts.append(_battery(instance, found))
        if seed == 1:
            problems += found
    if transcripts[0] != transcripts[1]:
        diverged = next((i for i, (a, b) in enumerate(zip(*transcripts, strict=False))
                         if a != b), min(map(len, transcripts)))
        problems.append("[a fresh instance] not deterministic: the same calls on a fresh instance "
                        f"gave another answer at call {diverged + 1} "
                        f"({_show(transcripts[0], diverged)} then "
                        f"{_show(transcripts[1], diverged)}); take no randomness from the global "
                        "random or the clock, and keep per-follower state in the progress")
    report.cases.append(f"check_interval_ms for lag times {', '.join(map(str, LAG_TIMES))} ms")
    report.cases += [label for label, _ in STEPS]
    report.cases.append("the same calls on a fresh instance, answer for answer")
    problems += check_isr_model(cls, options)
    report.cases += [f"{CASE[1:-1]}: out within ten lag times, back in, settled, safe",
                     "the model run twice, byte for byte"]
    if problems:
        raise ConformanceError("isr", cls, problems)
    return report


def _show(transcript: list[Any], i: int) -> str:
    return repr(transcript[i]) if i < len(transcript) else "nothing"
