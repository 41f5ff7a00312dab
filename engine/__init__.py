"""Load, validate, compile and decide image-routing policies."""
