"""Package data: the policy language reference, the generated policy pages and one page per
lint code, shipped so that `visiongate rule CODE` works offline from an installed package."""
