"""The sanitizer's optional C scanner; everything else about the build is in pyproject.toml.

`optional=True`: where no compiler is at hand the build goes on without it, and the sanitizer
takes its pure-Python paths (`visiongate version` says which is in use).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "visiongate.adapters.sanitize._bulk._scanner",
            sources=["adapters/sanitize/_bulk/_scanner.c"],
            optional=True,
        )
    ]
)
