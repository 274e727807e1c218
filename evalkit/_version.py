"""The package version, in a module of its own so that every package can read it cheaply."""

__version__ = "0.1.0"
