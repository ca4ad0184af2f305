"""numfuse's version: one place, read by setup.cfg and by the caches that key on it."""

__version__ = "0.1.0"
