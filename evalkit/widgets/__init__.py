"""Notebook widgets: the labeller and the case editor. Each can be driven from code as a person drives it."""

from evalkit.widgets._labeller import Labeller

__all__ = ["Labeller"]
