"""The version, defined once (hatch reads it from here; ``patchtx.__version__`` re-exports it):
a flat module of its own, so that agents/ and cli/ ask it without importing the package's surface."""

__version__ = "0.1.0"
