"""Notebook widgets: browse and edit cases, label outputs, browse disagreements and flipped cases, click a slice to
see its failures. Each can be driven from code as a person drives it (set a value, click, send the front end's
message)."""

from evalkit._lazy import attach
from evalkit.widgets._case_browser import CaseBrowser
from evalkit.widgets._case_editor import CaseEditor
from evalkit.widgets._disagreements import DisagreementBrowser
from evalkit.widgets._flips import FlippedCases
from evalkit.widgets._labeller import Labeller
from evalkit.widgets._slice_failures import SliceFailures

__getattr__, __dir__, __all__ = attach(__name__, __file__)
