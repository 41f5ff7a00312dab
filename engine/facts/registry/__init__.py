"""The provider registry: its model (`_registry`, `_types`), its schema (`_schema`) and its
staged loader (`_load`). `visiongate.engine.facts` names what the rest of the engine uses."""
