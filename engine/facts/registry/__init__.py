"""The provider registry: its values (`_types`, `_route`), its queries (`_registry`, `_answers`),
its schema (`_schema`) and its staged loader (`_load`). `visiongate.engine.facts` names what
the rest of the engine uses."""
