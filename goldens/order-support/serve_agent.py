"""The simulated model for this suite under ``evalkit serve --rules goldens/order-support/serve_rules.toml``:
the careful habits of order_agent.py, answering the Messages API with tool_use blocks. Not Claude."""

from order_agent import from_messages, next_step

from evalkit.testing import Reply


def answer(body):
    turns, calls = from_messages(body)
    step = next_step(turns, calls, careful=True)
    if step[0] == "reply":
        return Reply(text=step[1])
    _, name, arguments = step
    return Reply(tool_calls=[{"name": name, "input": arguments}])
