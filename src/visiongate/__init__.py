"""visiongate: one gate, written as data, for images produced by agent tools."""

__version__ = "0.1.0"
