"""`visiongate test` and the pytest plugin: policy tests written as YAML.

`_load` reads and validates `*.test.yaml` files, `_run` runs their cases against a policy
and measures rule and cell coverage, `_report` renders the outcome.
"""
