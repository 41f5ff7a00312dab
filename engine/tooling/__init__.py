"""Operator tooling over the runtime: what people and CI run against policies and traces.

- `lint/`: load errors and exact table checks, rendered as text, JSON, GitHub or SARIF;
- `policytest/`: `*.test.yaml` policy tests, their coverage and reports;
- `audit/`: reading decision traces back and checking them against policies;
- `_explain`, `_diff`, `_docs`: the decision table, policy diffs and generated pages.

The runtime (`visiongate.engine` outside this package) never imports from here.
"""
