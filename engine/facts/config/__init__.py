"""The agent config: the frozen `AgentConfig` and its queries (`_config`), the reader that
makes one of a mapping (`_reader`), the keys visiongate reads and their near misses
(`_known_keys`) and the provider declarations (`_providers`)."""
