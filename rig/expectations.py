"""Expectations: a scenario's checks over summary.json, evaluated after the analysis."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rig.scenario.model import Expectation
from rig.scenario.summary_keys import split_path

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
}


def lookup(summary: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of summary.json (list items by index; a part with a dot in
    double quotes), or None if absent."""
    node: Any = summary
    try:
        parts = split_path(path)
    except ValueError:
        return None
    for part in parts:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _measure(expectation: Expectation, summary: Mapping[str, Any]) -> Any:
    if expectation.metric is not None:
        return lookup(summary, expectation.metric)
    numerator, denominator = (lookup(summary, p) for p in expectation.ratio or ("", ""))
    if not isinstance(numerator, int | float) or not isinstance(denominator, int | float):
        return None
    return numerator / denominator if denominator else None


def _judge(expectation: Expectation, value: Any) -> bool | None:
    if value is None and expectation.value is not None:
        return None  # the metric does not exist or cannot be computed: unknown
    if (expectation.op in ("==", "!=") and expectation.tolerance
            and isinstance(value, int | float) and isinstance(expectation.value, int | float)):
        close = math.isclose(value, expectation.value, rel_tol=0, abs_tol=expectation.tolerance)
        return close if expectation.op == "==" else not close
    try:
        return bool(_OPS[expectation.op](value, expectation.value))
    except TypeError:
        return None


def evaluate(expectations: Sequence[Expectation],
             summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per expectation: what it says, the measured value, and ok (true/false/null)."""
    results = []
    for expectation in expectations:
        value = _measure(expectation, summary)
        results.append({"expect": expectation.text, "description": expectation.description,
                        "value": value, "ok": _judge(expectation, value),
                        "line": expectation.line})
    return results
