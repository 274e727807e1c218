"""The systems a suite is run against: Claude with a prompt, or a Python function."""

from evalkit.systems._systems import (
    ClaudeSystem,
    PythonSystem,
    System,
    SystemError_,
    load_system,
)

__all__ = [
    "ClaudeSystem",
    "PythonSystem",
    "System",
    "SystemError_",
    "load_system",
]
