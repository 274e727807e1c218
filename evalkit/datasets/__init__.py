"""Published judge data sets, read in place from a folder the user names (never copied into a project)."""

from evalkit.datasets._llmbar import JudgeFigures, LLMBar, LLMBarSet, load_llmbar
from evalkit.datasets._pandalm import PandaLM, load_pandalm

__all__ = ["JudgeFigures", "LLMBar", "LLMBarSet", "PandaLM", "load_llmbar", "load_pandalm"]
