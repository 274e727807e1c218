"""Published judge data sets, read in place from a folder the user names (never copied into a project)."""

from evalkit._lazy import INTERNAL, attach
from evalkit.datasets._llmbar import LLMBar, load_llmbar
from evalkit.datasets._pandalm import PandaLM, load_pandalm

if INTERNAL:
    from evalkit.datasets._llmbar import JudgeFigures, LLMBarSet

__getattr__, __dir__, __all__ = attach(__name__, __file__)
