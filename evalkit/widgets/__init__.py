"""Notebook widgets: the labeller and the case editor. Each can be driven from code as a person drives it."""

from evalkit.widgets._case_browser import CaseBrowser, cases_table, check_summary
from evalkit.widgets._case_editor import CaseEditor, diff_html, problems_html
from evalkit.widgets._labeller import Labeller
from evalkit.widgets._slice_failures import SliceFailures, failures_table

__all__ = [
    "CaseBrowser",
    "CaseEditor",
    "Labeller",
    "SliceFailures",
    "cases_table",
    "check_summary",
    "diff_html",
    "failures_table",
    "problems_html",
]
