"""Plotly figures for the report and the comparison, built in Python as plain dicts.

Plain dicts (not plotly.graph_objects) keep rendering fast and the JSON deterministic; the page
hands them to the inlined plotly.js. Every figure carries the SIMULATED label, every axis a unit,
every trace a hover template, and every timeline the run's fault markers.

    figure     Chart, one figure on the page, and the look every figure shares
    styles     how traces are told apart (legend names, colours, dashes)
    series     the bucketed fetch sums a timeline draws
    faults     fault lines, down spans and ▼ hovers on a time axis
    timelines  the three fetch timelines
    sizes      the fetch body-size bars
    fetch      all fetch charts of a one-run report
"""
