"""Report stage: self-contained, offline HTML pages built with jinja2 and plotly.js.

One run's report, a comparison of several runs, and an index over a matrix of runs. Reads what
the earlier stages wrote; never re-simulates and never imports pyspark.
"""

from __future__ import annotations

from rig.report.compare import render_comparison
from rig.report.index import render_index
from rig.report.render import render_report

__all__ = ["render_comparison", "render_index", "render_report"]
