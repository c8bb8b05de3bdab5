"""Report stage: one self-contained, offline HTML page per run, built with jinja2 and plotly.js.

Reads what the earlier stages wrote; never re-simulates and never imports pyspark.
"""

from __future__ import annotations

from rig.report.render import render_report

__all__ = ["render_report"]
