"""Shared pytest configuration: the local Anthropic-compatible server fixtures."""

pytest_plugins = ["evalkit.testing.fixtures"]
