"""The Claude system: a suite's prompt.md as the system prompt, its model settings, its output schema."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from evalkit._hashing import content_hash, sha256_hex


def render_user_turn(case_input: Any) -> str:
    """The user turn for a case: each key of an object input as <key>...</key>, a string as it is."""
    if isinstance(case_input, str):
        return case_input
    if isinstance(case_input, dict):
        parts = []
        for key, value in case_input.items():
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
            parts.append(f"<{key}>\n{text}\n</{key}>")
        return "\n".join(parts)
    return json.dumps(case_input, ensure_ascii=False, indent=2)


def conversation(case_input: Any) -> list[dict[str, Any]]:
    """The messages for a case: a conversation input's turns as they are (the system answers its last user
    turn), any other input as one user turn."""
    from evalkit.suite import is_conversation

    if is_conversation(case_input):
        return [{"role": t["role"], "content": t["content"]} for t in case_input]
    return [{"role": "user", "content": render_user_turn(case_input)}]


def structured_output_config(schema: dict[str, Any]) -> dict[str, Any]:
    """The request field asking Claude to answer with JSON matching `schema` (made strict as the SDK does)."""
    from evalkit._client import json_schema_format

    return {"format": json_schema_format(schema)}


@dataclass
class ClaudeSystem:
    """A suite's prompt.md as the system prompt, its model settings, and its output schema if it has one."""

    prompt: str
    model: str
    max_tokens: int = 1024
    temperature: float | None = 0.0
    top_p: float | None = None
    thinking_budget: int | None = None
    output_schema: dict[str, Any] | None = None
    name: str = "claude"
    prompt_path: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    tools: list[dict[str, Any]] | None = None
    """The tools offered (the suite's tools.json): a case then runs the tool-use loop."""
    max_turns: int = 8

    @property
    def free(self) -> bool:
        # every answer not in the cache is a paid call
        return False

    @property
    def prompt_hash(self) -> str:
        return sha256_hex(self.prompt)[:12]

    def build_request(self, case_input: Any) -> dict[str, Any]:
        """The plain-JSON messages.create arguments for one case: what the cache key hashes."""
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": self.prompt,
            "messages": conversation(case_input),
        }
        if self.temperature is not None and self.thinking_budget is None:
            request["temperature"] = self.temperature
        if self.top_p is not None:
            request["top_p"] = self.top_p
        if self.thinking_budget is not None:
            request["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        if self.output_schema is not None:
            request["output_config"] = structured_output_config(self.output_schema)
        if self.tools:
            request["tools"] = self.tools
        return request | self.extra

    def parse_output(self, text: str, parsed_json: Any = None) -> Any:
        """The system's output: the structured JSON when a schema was asked for, else the stripped text."""
        if self.output_schema is None:
            return text.strip()
        if parsed_json is not None:
            return parsed_json
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text.strip()  # graded as is: a schema check will say why it fails

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "claude",
            "name": self.name,
            "model": self.model,
            "max_tokens": self.max_tokens,
            # what build_request sends: with thinking, no temperature
            "temperature": self.temperature if self.thinking_budget is None else None,
            "top_p": self.top_p,
            "thinking_budget": self.thinking_budget,
            "prompt_path": self.prompt_path,
            "prompt_hash": self.prompt_hash,
            "output_schema_hash": content_hash(self.output_schema) if self.output_schema else None,
        } | ({"tools_hash": content_hash(self.tools), "max_turns": self.max_turns} if self.tools else {})
