"""The rules file of ``evalkit serve``: TOML with request rules, the simulated judge's settings and rate limits.

```toml
text = "the reply when no rule matches"        # optional

[[rules]]                                       # tried in order; the first match answers
contains = "where is my order"                  # case-insensitive substring of the last user message
# regex = "order (\\d+)"                        #   or a regular expression (re.search), instead of contains
model = "claude-sonnet-4-6"                     # optional: only requests for this model
system = "support agent"                        # optional: case-insensitive substring of the system prompt
reply = "It shipped yesterday."                 # one of: reply (text), json (any value, sent as JSON text),
# json = { label = "shipping" }                 #   or responder = "module:function", called with the
# responder = "my_replies:answer"               #   request body, returning a str, dict, list or Reply

[judge]
mode = "simulated"                              # or "off": judge requests are answered like any other
overlap = 0.5
position_bias = 0.0
verbosity_bias = 0.0
injection_susceptibility = 0.0
seed = 0

[[judge.rules]]                                 # a criterion's verdict when the candidate matches
candidate = "guaranteed by friday"              # case-insensitive substring (or candidate_regex = "...")
criterion = "promise"                           # optional: criteria containing this
met = false

[limits]
rpm = 50                                        # requests per minute (token bucket)
itpm = 30000                                    # input tokens per minute
```
"""

from __future__ import annotations

import importlib
import re
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalkit.errors import RulesFileError
from evalkit.testing.server._replies import Reply
from evalkit.testing.server._simulated_judge import JudgeRule, SimulatedJudge
from evalkit.testing.server._tokens import content_text, last_user_text

__all__ = ["RequestRule", "RulesFile", "RulesResponder", "load_rules_file"]

_TOP_KEYS = {"text", "rules", "judge", "limits"}
_RULE_KEYS = {"contains", "regex", "model", "system", "reply", "json", "responder"}
_JUDGE_KEYS = {
    "mode",
    "overlap",
    "position_bias",
    "verbosity_bias",
    "injection_susceptibility",
    "seed",
    "rules",
}
_JUDGE_RULE_KEYS = {"candidate", "candidate_regex", "criterion", "met"}
_LIMIT_KEYS = {"rpm", "itpm"}


@dataclass(frozen=True)
class RequestRule:
    """One ``[[rules]]`` entry: what it matches and what it answers."""

    pattern: re.Pattern[str]
    answer: Callable[[dict[str, Any]], Any]
    model: str | None = None
    system: str | None = None

    def matches(self, body: Mapping[str, Any]) -> bool:
        if self.model is not None and body.get("model") != self.model:
            return False
        if (
            self.system is not None
            and self.system.casefold() not in content_text(body.get("system")).casefold()
        ):
            return False
        return self.pattern.search(last_user_text(body)) is not None


@dataclass(frozen=True)
class RulesResponder:
    """A responder from request rules: the first matching rule's reply, or None (the server's default)."""

    rules: tuple[RequestRule, ...]

    def __call__(self, body: dict[str, Any]) -> str | dict[str, Any] | list[Any] | Reply | None:
        for rule in self.rules:
            if rule.matches(body):
                reply = rule.answer(body)
                return reply if reply is None or isinstance(reply, str | dict | list | Reply) else str(reply)
        return None


@dataclass(frozen=True)
class RulesFile:
    """What a rules file sets; None for what it leaves to the command line or the defaults."""

    rules: tuple[RequestRule, ...] = ()
    text: str | None = None
    judge_mode: str | None = None
    judge: Mapping[str, Any] = field(default_factory=dict)
    judge_rules: tuple[JudgeRule, ...] = ()
    rpm: int | None = None
    itpm: int | None = None

    def simulated_judge(self, **overrides: Any) -> SimulatedJudge:
        """The simulated judge this file describes, with ``overrides`` (those not None) on top."""
        settings = {**self.judge, **{k: v for k, v in overrides.items() if v is not None}}
        return SimulatedJudge(rules=self.judge_rules, **settings)


def _header_lines(text: str, header: str) -> list[int]:
    """The 1-based line of each ``[[header]]`` table, so that an entry's errors can say where it is."""
    pattern = re.compile(r"^[ \t]*\[\[[ \t]*" + re.escape(header) + r"[ \t]*\]\]", re.MULTILINE)
    return [text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(text)]


def _import_responder(target: str, where: str, base: Path) -> Callable[[dict[str, Any]], Any]:
    module_name, sep, func_name = target.partition(":")
    if not sep or not module_name or not func_name:
        raise RulesFileError(f"{where}: responder {target!r} must be 'module:function'")
    # a responder module next to the rules file imports without any PYTHONPATH
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RulesFileError(
            f"{where}: cannot import {module_name!r} for responder {target!r}: {exc}; put the module next to the "
            "rules file or on PYTHONPATH"
        ) from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise RulesFileError(f"{where}: {module_name!r} has no function {func_name!r}")
    return func


def _rule(entry: Any, where: str, base: Path) -> RequestRule:
    if not isinstance(entry, dict):
        raise RulesFileError(f"{where}: a rule must be a table")
    unknown = set(entry) - _RULE_KEYS
    if unknown:
        raise RulesFileError(f"{where}: unknown keys {sorted(unknown)}; a rule takes {sorted(_RULE_KEYS)}")
    matchers = [k for k in ("contains", "regex") if k in entry]
    if len(matchers) != 1 or not isinstance(entry[matchers[0]], str):
        raise RulesFileError(f'{where}: give exactly one of contains = "text" or regex = "pattern"')
    if "contains" in entry:
        pattern = re.compile(re.escape(entry["contains"]), re.IGNORECASE)
    else:
        try:
            pattern = re.compile(entry["regex"])
        except re.error as exc:
            raise RulesFileError(
                f"{where}: regex {entry['regex']!r} is not a valid regular expression: {exc}"
            ) from None
    answers = [k for k in ("reply", "json", "responder") if k in entry]
    if len(answers) != 1:
        raise RulesFileError(f"{where}: give exactly one of reply, json or responder")
    for key in ("model", "system"):
        if key in entry and not isinstance(entry[key], str):
            raise RulesFileError(f"{where}: {key} must be a string")
    answer: Callable[[dict[str, Any]], Any]
    if "reply" in entry:
        if not isinstance(entry["reply"], str):
            raise RulesFileError(f"{where}: reply must be a string (use json = ... for a JSON reply)")
        text = entry["reply"]
        answer = lambda body: text  # noqa: E731
    elif "json" in entry:
        data = Reply(data=entry["json"])
        answer = lambda body: data  # noqa: E731
    else:
        if not isinstance(entry["responder"], str):
            raise RulesFileError(f"{where}: responder must be a 'module:function' string")
        answer = _import_responder(entry["responder"], where, base)
    return RequestRule(pattern=pattern, answer=answer, model=entry.get("model"), system=entry.get("system"))


def _judge_rule(entry: Any, where: str) -> JudgeRule:
    if not isinstance(entry, dict):
        raise RulesFileError(f"{where}: a judge rule must be a table")
    unknown = set(entry) - _JUDGE_RULE_KEYS
    if unknown:
        raise RulesFileError(
            f"{where}: unknown keys {sorted(unknown)}; a judge rule takes {sorted(_JUDGE_RULE_KEYS)}"
        )
    matchers = [k for k in ("candidate", "candidate_regex") if k in entry]
    if len(matchers) != 1 or not isinstance(entry[matchers[0]], str):
        raise RulesFileError(
            f'{where}: give exactly one of candidate = "text" or candidate_regex = "pattern"'
        )
    if not isinstance(entry.get("met"), bool):
        raise RulesFileError(f"{where}: met must be true or false")
    criterion = entry.get("criterion")
    if criterion is not None and not isinstance(criterion, str):
        raise RulesFileError(f"{where}: criterion must be a string")
    regex = "candidate_regex" in entry
    if regex:
        try:
            re.compile(entry["candidate_regex"])
        except re.error as exc:
            raise RulesFileError(
                f"{where}: candidate_regex is not a valid regular expression: {exc}"
            ) from None
    return JudgeRule(candidate=entry[matchers[0]], met=entry["met"], criterion=criterion, regex=regex)


def _probability(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise RulesFileError(f"{where}: must be a number from 0 to 1, got {value!r}")
    return float(value)


def _positive_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RulesFileError(f"{where}: must be a whole number above 0, got {value!r}")
    return value


def load_rules_file(path: str | Path) -> RulesFile:
    """Read and check a rules file (the module docs show the format).

    Parameters
    ----------
    path:
        The TOML file.

    Returns
    -------
    RulesFile
        Its rules, judge settings and limits. Raises ``RulesFileError`` saying file, line and field.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RulesFileError(f"{path}: cannot read the rules file: {exc.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesFileError(f"{path}: not valid TOML: {exc}") from None
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise RulesFileError(
            f"{path}: unknown keys {sorted(unknown)}; a rules file takes {sorted(_TOP_KEYS)}"
        )
    base = path.resolve().parent
    entries = data.get("rules", [])
    if not isinstance(entries, list):
        raise RulesFileError(f"{path}: rules must be an array of tables ([[rules]])")
    lines = _header_lines(text, "rules")
    rules = tuple(
        _rule(e, f"{path}:{lines[i] if i < len(lines) else 1}: rules[{i}]", base)
        for i, e in enumerate(entries)
    )
    if "text" in data and not isinstance(data["text"], str):
        raise RulesFileError(f"{path}: text must be a string")

    judge = data.get("judge", {})
    if not isinstance(judge, dict):
        raise RulesFileError(f"{path}: judge must be a table ([judge])")
    unknown = set(judge) - _JUDGE_KEYS
    if unknown:
        raise RulesFileError(
            f"{path}: [judge]: unknown keys {sorted(unknown)}; it takes {sorted(_JUDGE_KEYS)}"
        )
    mode = judge.get("mode")
    if mode is not None and mode not in ("simulated", "off"):
        raise RulesFileError(f'{path}: [judge] mode: must be "simulated" or "off", got {mode!r}')
    settings: dict[str, Any] = {}
    for key in ("overlap", "position_bias", "verbosity_bias", "injection_susceptibility"):
        if key in judge:
            settings[key] = _probability(judge[key], f"{path}: [judge] {key}")
    if "seed" in judge:
        if isinstance(judge["seed"], bool) or not isinstance(judge["seed"], int):
            raise RulesFileError(f"{path}: [judge] seed: must be a whole number")
        settings["seed"] = judge["seed"]
    judge_entries = judge.get("rules", [])
    if not isinstance(judge_entries, list):
        raise RulesFileError(f"{path}: judge.rules must be an array of tables ([[judge.rules]])")
    jlines = _header_lines(text, "judge.rules")
    judge_rules = tuple(
        _judge_rule(e, f"{path}:{jlines[i] if i < len(jlines) else 1}: judge.rules[{i}]")
        for i, e in enumerate(judge_entries)
    )

    limits = data.get("limits", {})
    if not isinstance(limits, dict) or set(limits) - _LIMIT_KEYS:
        raise RulesFileError(f"{path}: [limits] takes only rpm and itpm")
    rpm = _positive_int(limits["rpm"], f"{path}: [limits] rpm") if "rpm" in limits else None
    itpm = _positive_int(limits["itpm"], f"{path}: [limits] itpm") if "itpm" in limits else None
    return RulesFile(
        rules=rules,
        text=data.get("text"),
        judge_mode=mode,
        judge=settings,
        judge_rules=judge_rules,
        rpm=rpm,
        itpm=itpm,
    )
