"""The systems a suite is run against: Claude with a prompt, or a Python function."""

from evalkit._lazy import attach
from evalkit._systems._claude import ClaudeSystem
from evalkit._systems._load import RunnableSystem, as_system, load_system
from evalkit._systems._protocol import CallsFunction, SendsRequest, System
from evalkit._systems._python import PythonSystem, python_system
from evalkit._systems._tools import ToolBackend, backend_for, run_python_system, tool_output

__getattr__, __dir__, __all__ = attach(__name__, __file__)
