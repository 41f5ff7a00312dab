"""What the proxy knows of MCP clients: their config entries for `--print-config` and their
known limits for `--client` (`_config`), and the entry's name read from a server's command
line (`_names`). Only the standard library is imported."""
