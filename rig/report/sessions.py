"""The "Fetch-session cache" section: how full each broker's KIP-227 cache was, who was evicted,
and what the clients left without a session paid in full fetches.

Shown when some variant used fetch sessions (metrics/sessions.json has cache samples). The
numbers come from rig.analysis.sessions: `variants.<v>.sessions` in summary.json and the
occupancy samples and per-second counts in metrics/sessions.json.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from rig import rundir
from rig.report.charts.figure import PALETTE, Chart, FaultMark, base_layout, time_unit
from rig.report.charts.styles import RUN_DASHES
from rig.report.format import fmt_int, fmt_rate
from rig.report.inputs import RunInputs, dig
from rig.report.recovery.frame import (
    count_layout,
    finish_timeline,
    shared_marks,
    shared_span,
    steps,
    variant_legend,
)
from rig.report.recovery.values import to_int

__all__ = ["build_sessions"]



def _summary_rows(inputs: RunInputs, variants: Sequence[str]) -> list[dict[str, Any]]:
    def cells(path: Sequence[str], fmt: Any = fmt_int) -> list[str]:
        return [fmt(dig(inputs.summary, "variants", v, *path)) for v in variants]

    rows: list[dict[str, Any]] = [
        {"label": "Sessions created", "cells": cells(["sessions", "created"])},
        {"label": "Sessions evicted", "cells": cells(["sessions", "evicted"]), "emph": True},
        {"label": "Error 70 FETCH_SESSION_ID_NOT_FOUND",
         "cells": cells(["sessions", "errors", "session_id_not_found"])},
        {"label": "Error 71 INVALID_FETCH_SESSION_EPOCH",
         "cells": cells(["sessions", "errors", "invalid_session_epoch"])},
        {"label": "Most sessions on one broker", "cells": cells(["sessions",
                                                                 "max_sessions_per_broker"])},
        {"label": "Consumer full fetches without a session", "emph": True,
         "cells": cells(["sessions", "sessionless_full_fetches", "consumer"])},
        {"label": "Consumer request bytes", "unit": "per second",
         "cells": cells(["fetch", "consumer", "request_bytes_per_second"], fmt_rate)},
        {"label": "Consumer response bytes", "unit": "per second",
         "cells": cells(["fetch", "consumer", "response_bytes_per_second"], fmt_rate)},
        {"label": "Follower request bytes", "unit": "per second",
         "cells": cells(["fetch", "follower", "request_bytes_per_second"], fmt_rate)},
    ]
    return [{"emph": False, "unit": None, **row} for row in rows]


def _occupancy_chart(samples: Sequence[Mapping[str, Any]], variants: Sequence[str],
                     marks: Sequence[FaultMark], span_s: float) -> Chart | None:
    """Sessions cached per broker over time, a colour per variant and a dash per broker, with
    each variant's slot limit as a thin dotted line."""
    lines: dict[tuple[str, int], list[dict[str, Any]]] = {}
    slots: dict[str, int] = {}
    for s in samples:
        v = str(s.get("variant"))
        if v in variants:
            lines.setdefault((v, to_int(s.get("broker"))), []).append(
                {"t_ms": float(s.get("t_s") or 0) * 1000, "sessions": to_int(s.get("sessions"))})
            if s.get("slots") is not None:
                slots[v] = to_int(s.get("slots"))
    lines = {k: rows for k, rows in lines.items() if any(r["sessions"] for r in rows)}
    if not lines:
        return None
    brokers = sorted({b for _, b in lines})
    unit, scale = time_unit(span_s)
    traces: list[dict[str, Any]] = []
    for (v, broker), rows in sorted(lines.items(), key=lambda kv: (variants.index(kv[0][0]),
                                                                   kv[0][1])):
        xs, ys, _ = steps(rows, "sessions", span_s, 2000)
        i = variants.index(v)
        traces.append({
            "type": "scatter", "mode": "lines", "name": v, "meta": f"broker {broker}",
            "x": [round(x / scale, 6) for x in xs], "y": ys,
            "line": {"color": PALETTE[i % len(PALETTE)], "shape": "hv",
                     "dash": RUN_DASHES[brokers.index(broker) % len(RUN_DASHES)],
                     "width": max(1.5, 4.0 - 1.25 * i)},
            "hovertemplate": f"%{{y:,}} sessions on broker {broker}<extra>{v}</extra>",
        })
    top = max(y for t in traces for y in t["y"])
    for v, limit in slots.items():
        if any(key[0] == v for key in lines) and limit <= 2 * top:
            i = variants.index(v)
            traces.append({
                "type": "scatter", "mode": "lines", "name": v, "meta": "slots",
                "x": [0, round(span_s / scale, 6)], "y": [limit, limit],
                "line": {"color": PALETTE[i % len(PALETTE)], "dash": "dot", "width": 1},
                "hovertemplate": f"{limit:,} slots<extra>{v}</extra>",
            })
    title = "Fetch sessions cached per broker"
    layout = count_layout(traces, title, unit, "sessions (count)")
    caption = ("How many fetch sessions each broker's cache held, sampled each second "
               "(a dash per broker: " + ", ".join(
                   f"broker {b} {RUN_DASHES[n % len(RUN_DASHES)]}"
                   for n, b in enumerate(brokers)) + "); a thin dotted line marks a variant's "
               "max.incremental.fetch.session.cache.slots. A line flat at its limit is a full "
               "cache: new sessions then need an eviction or go without.")
    return finish_timeline("chart-session-occupancy", title, caption, traces, layout, marks,
                           span_s, scale, len(variants) > 1)


def _churn_chart(buckets: Sequence[Mapping[str, Any]], variants: Sequence[str],
                 marks: Sequence[FaultMark], span_s: float) -> Chart | None:
    """Per bucket of metrics/session_churn.json (bucketed by the analysis, drawn as it is):
    evictions (bars) and consumer full fetches without a session (lines)."""
    shown = [v for v in variants
             if any(to_int(r.get("evicted")) or to_int(r.get("not_found"))
                    for r in buckets if r.get("variant") == v)]
    if not shown:
        return None
    unit, scale = time_unit(span_s)
    bucket = max(1, max(to_int(r.get("bucket_s")) for r in buckets))
    n = math.ceil(span_s / bucket)
    traces: list[dict[str, Any]] = []
    for v in variants:
        evicted, sessionless = [0] * n, [0] * n
        for r in buckets:
            k = to_int(r.get("second")) // bucket
            if r.get("variant") == v and 0 <= k < n:
                evicted[k] += to_int(r.get("evicted"))
                sessionless[k] += to_int(r.get("consumer_sessionless"))
        i = variants.index(v)
        xs = [round(k * bucket / scale, 6) for k in range(n)]
        evicted_rate = [round(c / bucket, 2) for c in evicted]
        sessionless_rate = [round(c / bucket, 2) for c in sessionless]
        if any(evicted):
            traces.append({
                "type": "bar", "name": v, "meta": "evictions", "x": xs, "y": evicted_rate,
                "marker": {"color": PALETTE[i % len(PALETTE)]}, "opacity": 0.55,
                "hovertemplate": f"%{{y:,}} sessions evicted per second<extra>{v}</extra>",
            })
        traces.append({
            "type": "scatter", "mode": "lines", "name": v, "meta": "sessionless",
            "x": [*xs, round(span_s / scale, 6)], "y": [*sessionless_rate, sessionless_rate[-1]],
            "line": {"color": PALETTE[i % len(PALETTE)], "shape": "hv",
                     "width": max(1.5, 4.0 - 1.25 * i)},
            "hovertemplate": f"%{{y:,}} consumer full fetches without a session per "
                             f"second<extra>{v}</extra>",
        })
    variant_legend(traces)
    title = "Evictions and full-fetch fallback"
    layout = base_layout(title, f"simulated time ({unit})", f"per second (mean over {bucket} s)",
                         log_y=False)
    layout["barmode"] = "overlay"
    layout["yaxis"]["rangemode"] = "tozero"
    caption = (f"Per second, averaged over each {bucket} s: bars count sessions evicted, lines "
               "the consumer fetches answered as full fetches without a session (every fetch "
               "under Fetch v6; under v7 the fetches of clients that found no slot or whose "
               "session was evicted).")
    return finish_timeline("chart-session-churn", title, caption, traces, layout, marks, span_s,
                           scale, len(variants) > 1)


def build_sessions(inputs: RunInputs, variants: Sequence[str], marks: Sequence[FaultMark], *,
                   with_consumers: bool) -> dict[str, Any] | None:
    """The section's variables, or None when no variant cached a fetch session."""
    try:
        table = orjson.loads(rundir.metric_path(inputs.run_dir, rundir.SESSIONS).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None  # a run analysed before rig measured sessions
    data: Mapping[str, Any] = table if isinstance(table, Mapping) else {}
    samples = [s for s in data.get("occupancy") or [] if isinstance(s, Mapping)]
    try:
        churn = orjson.loads(rundir.metric_path(inputs.run_dir,
                                                rundir.SESSION_CHURN).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        churn = []  # a run analysed before the churn table: no churn chart
    buckets = [r for r in churn if isinstance(r, Mapping)] if isinstance(churn, list) else []
    if not any(to_int(s.get("sessions")) for s in samples):
        return None
    ends = [float(s.get("t_s") or 0) for s in samples]
    span_s = shared_span(inputs, variants, *ends)
    marks = shared_marks(marks, variants)
    charts = [c for c in (_occupancy_chart(samples, variants, marks, span_s),
                          _churn_chart(buckets, variants, marks, span_s)) if c is not None]
    rows = _summary_rows(inputs, variants)
    if not with_consumers:
        rows = [r for r in rows if "Consumer" not in r["label"]]
    return {"rows": rows, "charts": charts}
