"""The report's "Recovery" section: produce and replication headline numbers, the fault table,
partition health, produce and election timelines, and the records a run lost or let diverge.

Reads summary.json and metrics/{recovery,partition_timeline,produce_timeline,consumer_lag,
lost_records}.json (never the event logs); a missing piece leaves its table or chart out, never
an error.

    section      build_recovery: the section's template variables, or None to leave it out
    headline     RECOVERY_METRICS (the comparison shows the same rows) and the headline table
    fault_table  a row per fault: injected, detected, new leader, healed, recovered
    lost         the records a run lost or let diverge, grouped and batch by batch
    timelines    partition health, produce, elections and ISR changes, consumer lag
    frame        what every timeline of a section shares (the sessions and first-screen
                 timelines too): one time axis, fault marks, count layouts, a legend per variant
    values       tolerant readers: a metrics table, a whole number, seconds to the millisecond
"""
