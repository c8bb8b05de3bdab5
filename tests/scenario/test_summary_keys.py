"""summary_keys.py declares what summary.json can hold; real runs keep the declaration true.

Every key of the summary of every shipped scenario (run once per session by the golden tests'
fixture) must be declared, with a value of the declared kind. A new metric in the analysis
shows here first: declare it in rig/scenario/summary_keys.py so expectations may name it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from rig.scenario import summary_keys
from tests.conftest import ShippedRun

_KINDS = {
    summary_keys.NUMBER: lambda v: v is None or (isinstance(v, int | float)
                                                 and not isinstance(v, bool)),
    summary_keys.BOOL: lambda v: v is None or isinstance(v, bool),
    summary_keys.STRING: lambda v: v is None or isinstance(v, str),
    summary_keys.LIST: lambda v: isinstance(v, list),
    summary_keys.MAP: lambda v: isinstance(v, dict),
    "object": lambda v: v is None or v == {},  # a group of metrics, null when not measured
}


def _leaves(node: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from _leaves(value, (*prefix, str(key)))
    else:
        yield prefix, node


def undeclared(summary: dict[str, Any]) -> list[str]:
    """The keys of `summary` that summary_keys does not declare, or declares another kind."""
    wrong = []
    for path, value in _leaves(summary):
        kind = summary_keys.kind_of(path)
        if kind is None or not _KINDS[kind](value):
            wrong.append(f"{'.'.join(path)} = {value!r:.40} (declared: {kind})")
    return wrong


def test_the_check_sees_an_undeclared_key() -> None:
    summary = {"scenario": "s", "variants": {"v": {"produce": {"acked": 1, "new_metric": 2},
                                                   "checks": {"ok": "yes"}}}}
    assert undeclared(summary) == ["variants.v.produce.new_metric = 2 (declared: None)",
                                   "variants.v.checks.ok = 'yes' (declared: bool)"]


@pytest.mark.spark
def test_every_key_of_real_summaries_is_declared(
        shipped_results: dict[str, ShippedRun]) -> None:
    wrong = {}
    for name, run in shipped_results.items():
        summary = orjson.loads((run.run_dir / "summary.json").read_bytes())
        if undeclared(summary):
            wrong[name] = undeclared(summary)
    assert not wrong, wrong


def test_a_part_with_a_dot_is_quoted_or_escaped() -> None:
    split = summary_keys.split_path
    assert split('variants."zk-2.4".produce.acked') == ["variants", "zk-2.4", "produce", "acked"]
    assert split(r"variants.zk-2\.4.produce.acked") == ["variants", "zk-2.4", "produce", "acked"]
    assert split("variants.v7.produce") == ["variants", "v7", "produce"]
    with pytest.raises(ValueError, match="not closed"):
        split('variants."zk-2.4.produce')


def test_a_dotted_variant_is_checked_and_looked_up() -> None:
    from rig.expectations import lookup

    variants = ["zk-2.4", "zk-3.9"]
    assert summary_keys.check('variants."zk-2.4".produce.acked', variants) == (None, "number")
    problem, _ = summary_keys.check("variants.zk-2.4.produce.acked", variants)
    assert problem is not None and 'quoted: variants."zk-2.4".produce.acked' in problem
    summary = {"variants": {"zk-2.4": {"produce": {"acked": 7}}}}
    assert lookup(summary, 'variants."zk-2.4".produce.acked') == 7
    assert lookup(summary, r"variants.zk-2\.4.produce.acked") == 7
