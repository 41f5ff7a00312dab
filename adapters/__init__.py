"""Carry out the gate's lane for each image source; process and sanitize untrusted output."""
