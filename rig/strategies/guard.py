"""Run-time contract checks around the strategies of one simulated variant.

A strategy that breaks its contract mid-run (an assignment naming a broker twice, a session
client returning something other than a SessionRequest, a cache holding more sessions than its
slots, an exception) stops the run with a StrategyFailure naming the plugin, its kind, the
scenario, the simulated time and what the model was asking. Checks cost O(1) per call (placement:
O(partitions) once per topic), so every run keeps them on, built-ins included.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rig.errors import PluginError, StrategyFailure
from rig.scenario.model import BrokerSpec, TopicSpec, VariantSpec
from rig.strategies import registry
from rig.strategies.compaction.base import CleanPass, LogToClean
from rig.strategies.fetch_session.base import SessionContext, SessionRequest
from rig.strategies.kinds import KINDS
from rig.strategies.placement.base import PlacementError, check_assignment, check_leaders

# What the session strategy's client and cache must offer: their Protocols' methods.
CLIENT_METHODS = KINDS["fetch_session"].part_methods("client")
CACHE_METHODS = KINDS["fetch_session"].part_methods("cache")


@dataclass(frozen=True)
class RunContext:
    """Where a run is, for messages: the scenario, the variant, the clock and the event count."""

    scenario: str
    variant: str
    now_ms: Callable[[], float]
    last_seq: Callable[[], int]


@dataclass(frozen=True)
class _Identity:
    kind: str
    plugin: str  # the name the scenario uses
    origin: str
    context: RunContext

    def failure(self, during: str, problem: str) -> StrategyFailure:
        return StrategyFailure(kind=self.kind, plugin=self.plugin, origin=self.origin,
                               scenario=self.context.scenario, variant=self.context.variant,
                               t_ms=self.context.now_ms(), during=during,
                               last_seq=self.context.last_seq(), problem=problem)

    def raised(self, during: str, exc: Exception) -> StrategyFailure:
        return self.failure(during, f"raised {registry.describe_exception(exc)}")


class _Proxy:
    """Forwards what the guard does not check to the guarded object, so the model can use a
    strategy's extra methods and attributes as if there were no guard."""

    def __init__(self, inner: Any, who: _Identity):
        self._inner = inner
        self._who = who

    def __getattr__(self, attr: str) -> Any:
        inner = self.__dict__.get("_inner")
        if inner is None or attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(inner, attr)
        if inspect.ismethod(value):
            self.__dict__[attr] = value  # bound methods never change: later calls skip this hook
        return value

    def __repr__(self) -> str:
        return f"<guarded {self._inner!r}>"


def _missing(obj: Any, methods: Sequence[str]) -> list[str]:
    return [m for m in methods if not callable(getattr(obj, m, None))]


class GuardedPlacement(_Proxy):
    def assign(self, brokers: Sequence[BrokerSpec], topic: TopicSpec, rng: Any) -> list[
            tuple[int, ...]]:
        during = (f"while placing topic {topic.name!r} ({topic.partitions} partitions, "
                  f"replication factor {topic.replication_factor})")
        try:
            result = self._inner.assign(brokers, topic, rng)
        except PlacementError:
            raise  # a refusal Kafka would give too: the scenario's problem, reported as such
        except Exception as exc:
            raise self._who.raised(during, exc) from exc
        if not isinstance(result, (list, tuple)):
            raise self._who.failure(during, f"returned a {type(result).__name__}, expected a "
                                            "list of replica tuples")
        try:
            assignment = [tuple(replicas) for replicas in result]
        except TypeError:
            raise self._who.failure(during, "returned replica lists that are not sequences of "
                                            "broker ids") from None
        problems = check_assignment(assignment, brokers, topic) + check_leaders(assignment,
                                                                                  brokers)
        if problems:
            more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
            raise self._who.failure(during, "; ".join(problems[:5]) + more)
        return assignment


class GuardedSessions(_Proxy):
    def __init__(self, inner: Any, who: _Identity):
        super().__init__(inner, who)
        self._clients = 0

    def new_client(self) -> GuardedClient:
        self._clients += 1
        during = f"while creating session client #{self._clients} (one per replica fetcher)"
        try:
            client = self._inner.new_client()
        except Exception as exc:
            raise self._who.raised(during, exc) from exc
        missing = _missing(client, CLIENT_METHODS)
        if missing:
            raise self._who.failure(during, f"new_client() returned a {type(client).__name__}, "
                                            f"which lacks {', '.join(missing)}")
        return GuardedClient(client, self._who, self._clients)

    def new_cache(self, broker: int, slots: int, rng: Any) -> GuardedCache:
        during = f"while creating the session cache of broker {broker}"
        try:
            cache = self._inner.new_cache(broker, slots, rng)
        except Exception as exc:
            raise self._who.raised(during, exc) from exc
        missing = _missing(cache, CACHE_METHODS)
        if missing:
            raise self._who.failure(during, f"new_cache() returned a {type(cache).__name__}, "
                                            f"which lacks {', '.join(missing)}")
        return GuardedCache(cache, self._who, broker, slots)


class GuardedClient(_Proxy):
    def __init__(self, inner: Any, who: _Identity, number: int):
        super().__init__(inner, who)
        self._number = number

    def _during(self, what: str) -> str:
        return f"while session client #{self._number} {what}"

    def next_request(self, partitions: Mapping[Any, None], dirty: Mapping[Any, None],
                     version: int) -> SessionRequest:
        try:
            request = self._inner.next_request(partitions, dirty, version)
        except Exception as exc:
            raise self._who.raised(self._during("built its next Fetch request"), exc) from exc
        if not isinstance(request, SessionRequest):
            raise self._who.failure(self._during("built its next Fetch request"),
                                    f"next_request returned a {type(request).__name__}, "
                                    "expected a SessionRequest")
        if not request.full and request.listed is None:
            raise self._who.failure(self._during("built its next Fetch request"),
                                    "an incremental request (full=False) must carry `listed`: "
                                    "the partitions it lists, an empty dict when none changed")
        return request

    def on_response(self, request: SessionRequest, error_code: int, session_id: int) -> None:
        try:
            self._inner.on_response(request, error_code, session_id)
        except Exception as exc:
            raise self._who.raised(self._during(
                f"read a Fetch response (error {error_code}, session id {session_id})"),
                exc) from exc

    def on_disconnect(self) -> None:
        try:
            self._inner.on_disconnect()
        except Exception as exc:
            raise self._who.raised(self._during("was told of a disconnection"), exc) from exc


class GuardedCache(_Proxy):
    def __init__(self, inner: Any, who: _Identity, broker: int, slots: int):
        super().__init__(inner, who)
        self._broker = broker
        self._slots = slots

    def open(self, request: SessionRequest, request_partitions: Mapping[Any, None],
             privileged: bool, now_ms: float) -> SessionContext:
        try:
            context = self._inner.open(request, request_partitions, privileged, now_ms)
        except Exception as exc:
            raise self._who.raised(self._opening(request), exc) from exc
        if not isinstance(context, SessionContext):
            raise self._who.failure(self._opening(request),
                                    f"open returned a {type(context).__name__}, expected a "
                                    "SessionContext")
        if context.created:
            # Sessions are only added by a creation, so checking here bounds the cache always.
            held = self._inner.occupancy()
            if held > self._slots:
                raise self._who.failure(self._opening(request),
                                        f"the cache holds {held} sessions with "
                                        f"max.incremental.fetch.session.cache.slots = "
                                        f"{self._slots}")
        return context

    def _opening(self, request: SessionRequest) -> str:
        return (f"while broker {self._broker} opened the session of a Fetch request (session id "
                f"{request.session_id}, epoch {request.epoch})")

    def mark_changed(self, key: Any) -> None:
        try:
            self._inner.mark_changed(key)
        except Exception as exc:
            raise self._who.raised(f"while broker {self._broker} marked {key!r} changed",
                                   exc) from exc

    def sent(self, context: SessionContext, listed: Mapping[Any, None]) -> None:
        try:
            self._inner.sent(context, listed)
        except Exception as exc:
            raise self._who.raised(f"while broker {self._broker} sent a Fetch response of "
                                   f"session {context.session_id}", exc) from exc


class GuardedCompaction(_Proxy):
    """select must name one of the logs it was given (or None); clean must return a CleanPass
    that rewrites only non-active segments and never moves the cleaner checkpoint backwards."""

    def select(self, logs: list[Any], now_ms: float) -> Any:
        during = f"while choosing among {len(logs)} compacted logs"
        try:
            chosen = self._inner.select(logs, now_ms)
        except Exception as exc:
            raise self._who.raised(during, exc) from exc
        if chosen is None:
            return None
        if not isinstance(chosen, LogToClean):
            raise self._who.failure(during, f"returned a {type(chosen).__name__}, expected a "
                                            "LogToClean or None")
        if not any(chosen.target is log for log in logs):
            raise self._who.failure(during, "returned a log it was not offered (one in "
                                            "progress, or not compacted)")
        return chosen

    def clean(self, chosen: LogToClean, settings: Any, now_ms: float) -> CleanPass:
        target = chosen.target
        during = f"while cleaning {target.topic}-{target.partition}"
        try:
            plan = self._inner.clean(chosen, settings, now_ms)
        except Exception as exc:
            raise self._who.raised(during, exc) from exc
        if not isinstance(plan, CleanPass):
            raise self._who.failure(during, f"returned a {type(plan).__name__}, expected a "
                                            "CleanPass")
        segments = target.log.segments
        problems = []
        if not 0 <= plan.segments_replaced < len(segments):
            problems.append(f"replaces {plan.segments_replaced} of {len(segments)} segments "
                            "(the active segment is never cleaned)")
        elif plan.segments_replaced:
            end = segments[plan.segments_replaced].base_offset
            if any(b.base_offset >= end or b.base_offset < segments[0].base_offset
                   for b in plan.batches):
                problems.append("returned batches outside the segments it replaces")
        if plan.end_offset < min(chosen.first_dirty_offset, target.log.clean_offset):
            problems.append(f"moves the cleaner checkpoint back to {plan.end_offset}")
        if problems:
            raise self._who.failure(during, "; ".join(problems))
        return plan


# How each kind is guarded; kinds not listed run unguarded until their contract is written here.
# Each kind's guard, as its description names it (rig.strategies.kinds).
GUARDS: dict[str, Callable[[Any, _Identity], Any]] = {
    name: globals()[kind.guard] for name, kind in KINDS.items() if kind.guard}


def variant_problems(strategies: Mapping[str, Any], variant: VariantSpec) -> list[tuple[str, str]]:
    """(kind, message) for what a strategy needs of the variant and does not get."""
    problems = []
    sessions = strategies.get("fetch_session")
    need = getattr(sessions, "min_fetch_version", 0)
    if sessions is not None and isinstance(need, int) and variant.config.fetch_version < need:
        ref = variant.strategies.get("fetch_session")
        name = ref.name if ref is not None else getattr(sessions, "name", "?")
        problems.append(("fetch_session", (
            f"fetch_session strategy {name!r} needs Fetch v{need} or later, but variant "
            f"{variant.name!r} sends v{variant.config.fetch_version}: raise `kafka` or "
            "protocol.fetch_version, or choose another strategy")))
    return problems


def check_variant(strategies: Mapping[str, Any], variant: VariantSpec) -> None:
    """Raise PluginError (exit 2) if a strategy cannot run with this variant."""
    problems = variant_problems(strategies, variant)
    if problems:
        raise PluginError("; ".join(message for _kind, message in problems))


def guard_all(strategies: Mapping[str, Any], variant: VariantSpec,
              context: RunContext) -> dict[str, Any]:
    """`strategies` (kind → instance) with each wrapped in its kind's run-time guard."""
    check_variant(strategies, variant)
    guarded = {}
    for kind, strategy in strategies.items():
        wrap = GUARDS.get(kind)
        if wrap is None:
            guarded[kind] = strategy
            continue
        ref = variant.strategies.get(kind)
        name = ref.name if ref is not None else str(getattr(strategy, "name", "?"))
        guarded[kind] = wrap(strategy, _Identity(kind, name, registry.origin_of(kind, name),
                                                 context))
    return guarded


def strategy_problems(variants: Iterable[VariantSpec], *,
                      allow_paths: bool = False) -> list[tuple[str, str]]:
    """(kind, message) for every strategy the variants name that cannot be loaded, created with
    its options, or run with its variant (a Fetch version too old for it, say). Each distinct
    problem is listed once; empty when all is well."""
    problems: list[tuple[str, str]] = []
    created: dict[tuple[str, str, str], Any] = {}
    for variant in variants:
        instances = {}
        for kind, ref in variant.strategies.items():
            options = dict(ref.options)
            key = (kind, ref.name, repr(sorted(options.items())))
            if key not in created:
                try:
                    created[key] = registry.instantiate(kind, ref.name, options,
                                                            allow_paths=allow_paths)
                except PluginError as error:
                    created[key] = None
                    problems.append((kind, str(error)))
            if created[key] is not None:
                instances[kind] = created[key]
        problems += [p for p in variant_problems(instances, variant) if p not in problems]
    return problems


def preflight(variants: Iterable[VariantSpec], *, allow_paths: bool = False) -> None:
    """Load and create every strategy the variants name before anything runs: a broken plugin
    stops `rig run` at once (exit 2), not after the variants before it have simulated."""
    problems = strategy_problems(variants, allow_paths=allow_paths)
    if problems:
        raise PluginError("\n".join(message for _kind, message in problems))
