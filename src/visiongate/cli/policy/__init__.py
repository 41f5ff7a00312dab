"""Commands about policy files: `explain`, `lint`, `fmt`, `test`, `docs`, `diff`, `rule`."""
