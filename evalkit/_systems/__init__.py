"""The systems a suite is run against: Claude with a prompt, or a Python function."""

from evalkit._systems._claude import ClaudeSystem
from evalkit._systems._load import RunnableSystem, as_system, load_system
from evalkit._systems._protocol import CallsFunction, SendsRequest, System
from evalkit._systems._python import PythonSystem, python_system

__all__ = [
    "CallsFunction",
    "ClaudeSystem",
    "PythonSystem",
    "RunnableSystem",
    "SendsRequest",
    "System",
    "as_system",
    "load_system",
    "python_system",
]
