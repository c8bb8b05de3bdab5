"""A scenario's `expect` and `report.headline`: each path checked against the keys of the run's
summary, and the expectations split into those judged and those about a variant not run."""

from __future__ import annotations

from collections.abc import Sequence

from rig.scenario import summary_keys
from rig.scenario.model import Expectation
from rig.scenario.problems import Collector
from rig.scenario.source import Document, PathKey


def read_expectations(doc: Document, variants: Sequence[str] | None, run: Sequence[str],
                      out: Collector) -> tuple[tuple[Expectation, ...], tuple[Expectation, ...]]:
    """The expectations to judge, and those skipped because they speak of a variant that is
    not run (`--variant`): those cannot be measured, so they are neither passed nor failed."""
    judged: list[Expectation] = []
    skipped: list[Expectation] = []
    for i, raw in enumerate(doc.data.get("expect", [])):
        at: PathKey = ("expect", i)
        key = "metric" if "metric" in raw else "ratio"
        paths = [(raw["metric"], (*at, key))] if key == "metric" else [
            (m, (*at, key, n)) for n, m in enumerate(raw["ratio"])]
        kinds = []
        for path, where in paths:
            problem, kind = summary_keys.check(path, variants)
            if problem is not None:
                out.add(where, problem)
            kinds.append(kind)
        value = raw["value"]
        if (all(k == "number" for k in kinds) and value is not None
                and not (isinstance(value, int | float) and not isinstance(value, bool))):
            out.add((*at, "value"), f"{value!r} is not a number, but {raw.get(key)} is "
                    "measured as one: give a number (or null for 'not measured')")
        expectation = Expectation(
            op=raw["op"], value=value, metric=raw.get("metric"),
            ratio=(raw["ratio"][0], raw["ratio"][1]) if "ratio" in raw else None,
            tolerance=raw.get("tolerance", 0.0), description=raw.get("description", ""),
            line=doc.lines.locate(at, doc.file)[1])
        named = {parts[1] for parts in (summary_keys.path_parts(p) for p, _ in paths)
                 if parts[0] == "variants" and len(parts) > 1}
        (skipped if named - set(run) else judged).append(expectation)
    return tuple(judged), tuple(skipped)


def read_report_headline(doc: Document, errors: Sequence[tuple[PathKey, PathKey, str]],
                         out: Collector) -> tuple[str, ...]:
    """`report.headline`: each path must name one value of every variant's summary entry."""
    if any(spoiled[:1] == ("report",) for _, spoiled, _ in errors):
        return ()  # the schema said what is wrong with it
    paths = (doc.data.get("report") or {}).get("headline") or []
    for i, path in enumerate(paths):
        problem = summary_keys.check_variant_path(path)
        if problem is not None:
            out.add(("report", "headline", i), problem)
    return tuple(paths)
