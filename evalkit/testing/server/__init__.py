"""A local Anthropic-compatible HTTP server for tests and offline work.

``evalkit.testing`` exports what tests and notebooks use of it; the rest is for evalkit's own use.
"""

from evalkit._lazy import INTERNAL, attach

if INTERNAL:
    from evalkit.testing.server._faults import FAULT_KINDS, FaultKind, FaultPlan
    from evalkit.testing.server._limits import (
        MAX_JSON_DEPTH,
        ServerLimits,
        max_number_digits,
        parse_size,
        reaches_beyond_loopback,
    )
    from evalkit.testing.server._log import RequestRecord
    from evalkit.testing.server._main import main
    from evalkit.testing.server._rate_limits import RateLimits
    from evalkit.testing.server._replies import DEFAULT_TEXT, PINNED_MODEL_IDS, Reply, Responder
    from evalkit.testing.server._rules_file import RulesFile, RulesResponder, load_rules_file
    from evalkit.testing.server._schema_example import example_from_schema
    from evalkit.testing.server._server import SIMULATED_HEADER, LocalAnthropicServer
    from evalkit.testing.server._simulated_judge import SIMULATED_JUDGE_MODEL, JudgeRule, SimulatedJudge
    from evalkit.testing.server._tokens import (
        count_input_tokens,
        estimate_tokens,
        last_user_text,
        output_schema,
    )

__getattr__, __dir__, __all__ = attach(__name__, __file__)
