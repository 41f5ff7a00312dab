"""`visiongate audit`: decision traces read back and checked against the policies they name.

`_read` parses trace files and finds stale or suspicious decisions, `_report` renders them.
"""
