"""`visiongate lint`: every diagnostic a policy or registry file can have, and its renderers.

`_check` runs the checks (`lint_paths`), `_table` the exact checks over all cells, `_codes`
the catalogue of codes, `_ignore` inline suppressions, `_source` severities and file
discovery, `_report` the text/JSON/GitHub/SARIF renderers.
"""
