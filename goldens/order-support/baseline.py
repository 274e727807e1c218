"""The offline baseline: a rule-based agent with planted faults (order_agent.py, careful=False). Not Claude.

evalkit gives ``predict`` a ``tools`` function answering each call from the case's recorded tool_results, and
records every call; the output is the final reply with the calls."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "order_agent_baseline", Path(__file__).with_name("order_agent.py")
)
assert _spec is not None and _spec.loader is not None
agent = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(agent)


def predict(input, tools):
    return agent.run(input, tools, careful=False)
