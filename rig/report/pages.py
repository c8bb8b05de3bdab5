"""The jinja2 environment, the inlined plotly.js and safe JSON: what every rig page is made of."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import orjson
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from rig.report.charts.faults import FAULT_LABEL, FAULT_LABEL_LINES
from rig.report.paths import write_text_atomic

__all__ = ["environment", "json_for_script", "plotly_js", "write_page"]


# A variant name this short stays on one line in a table's header, even on a phone ("kafka-"
# over "2.0" reads as two names); a longer one may break at its hyphens.
SHORT_NAME = 12


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("rig.report", "templates"),
        autoescape=True,  # always: scenario names, descriptions and paths are user text
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.tests["short_name"] = lambda name: len(str(name)) <= SHORT_NAME
    return env


@cache
def plotly_js() -> Markup:
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs()
    # Inlined in a <script>: a literal "</script" would end it early (plotly.js has none today).
    return Markup(js.replace("</script", "<\\/script"))


def json_for_script(value: Any) -> Markup:
    """JSON safe inside <script type="application/json">: no "</script>", no "<!--"."""
    data = orjson.dumps(value)
    for raw, escaped in ((b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026")):
        data = data.replace(raw, escaped)
    return Markup(data.decode("utf-8"))


def write_page(template: str, context: dict[str, Any], out: Path, *, charts: bool) -> Path:
    """Render `template` with `context` (plus plotly.js when the page has charts) into `out`."""
    extra = {"plotly_js": plotly_js() if charts else Markup(""), "fault_label": FAULT_LABEL,
             "fault_label_lines": FAULT_LABEL_LINES}
    html = environment().get_template(template).render(**context, **extra)
    return write_text_atomic(Path(out), html)
