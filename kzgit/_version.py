"""kzgit's release, in a module of its own so that what reports it (the render cache key, SARIF
logs, ``--version``) need not import the package's public API (``kzgit/__init__.py`` imports
the builder)."""

__version__ = "0.1.0"
