"""Notebook widgets: the labeller and the case editor. Each can be driven from code as a person drives it."""

from evalkit.widgets._flips import FlippedCases
from evalkit.widgets._labeller import Labeller
from evalkit.widgets._slice_failures import SliceFailures, failures_table

__all__ = ["FlippedCases", "Labeller", "SliceFailures", "failures_table"]
