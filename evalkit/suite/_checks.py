"""Check models: what one grader looks at in an output, and with which parameters.

Every case form normalises to a list of these. Tiers order the cascade: schema and exact first, then code checks,
then the model judge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union, get_args

import regex
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

Normalizer = Literal["strip", "casefold", "whitespace", "punctuation", "numbers"]


def _compiles(pattern: str) -> str:
    # grading runs patterns on the regex engine (for its time limit): compile on that one, in its
    # re-compatible syntax
    try:
        regex.compile(pattern)
    except (regex.error, ValueError) as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from None
    return pattern


def _input_path(path: str) -> str:
    parts = path.split(".")
    if parts[0] != "input" or any(not part for part in parts):
        raise ValueError(
            f"{path!r} is not a path into the case's input: start it with 'input.', e.g. 'input.policy_facts'"
        )
    return path


RegexPattern = Annotated[str, AfterValidator(_compiles)]
InputPath = Annotated[str, AfterValidator(_input_path)]


def lookup_input(case_input: Any, path: str) -> tuple[bool, Any]:
    """Follow `input.a.b` (or a bare `a.b`, read inside the input) into a case's input: (found, value)."""
    parts = path.split(".")
    if parts[0] == "input":
        parts = parts[1:]
    current = case_input
    for part in parts:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif (
            isinstance(current, list)
            and part.lstrip("-").isdigit()
            and -len(current) <= int(part) < len(current)
        ):
            current = current[int(part)]
        else:
            return False, None
    return True, current


def _list_in_input(case_input: Any, path: str, what: str) -> list[Any]:
    """The list a `*_from` path names in a case's input; ValueError saying what is wrong otherwise."""
    found, value = lookup_input(case_input, path)
    if not found:
        raise ValueError(f"the case's input has nothing at {path!r}, where the {what} should be")
    if not isinstance(value, list):
        raise ValueError(f"{path!r} in the case's input is a {type(value).__name__}, not a list of {what}")
    return value


Tier = Literal["exact", "code", "judge"]


class _Check(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)

    field: str | None = Field(
        default=None, description="Dotted path into an object output; None = whole output."
    )
    name: str | None = Field(default=None, description="A label for reports.")

    @field_validator("field")
    @classmethod
    def _field_path(cls, v: str | None) -> str | None:
        if v is not None and (not v or any(not part for part in v.split("."))):
            raise ValueError("a field is a dotted path such as 'label' or 'line_items.0.amount'")
        return v

    if TYPE_CHECKING:
        kind: str  # each kind's model declares it as a Literal

    #: the cascade's tier; a class attribute, so the kind's model says it once
    tier: ClassVar[Tier] = "code"
    #: position in the cascade, lower runs first; None = the tier's place
    rank: ClassVar[int | None] = None

    @property
    def order(self) -> int:
        """Position in the cascade: lower runs first."""
        return self.rank if self.rank is not None else {"exact": 1, "code": 2, "judge": 3}[self.tier]

    @property
    def label(self) -> str:
        kind = getattr(self, "kind", "check")
        if self.name:
            return self.name
        return f"{kind}:{self.field}" if self.field else str(kind)

    #: keys added to the format after suites were first versioned: left out of a dump while they hold their
    #: default, so that adding them leaves every existing suite's version as it was
    later_keys: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _without_unused_later_keys(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in self.later_keys:
            info = type(self).model_fields[key]
            shown = info.alias or key
            if shown in data and getattr(self, key) == info.get_default(call_default_factory=True):
                del data[shown]
        return data

    def input_problems(self, case_input: Any) -> list[tuple[str, str, str]]:
        """(key, message, hint) for each way this check does not fit its case's input; none for most kinds."""
        return []


class ExactCheck(_Check):
    kind: Literal["exact"] = "exact"
    expected: Any = None
    any_of: list[Any] | None = Field(
        default=None, min_length=1, description="Accepted outputs; any one passes."
    )
    normalize: list[Normalizer] = Field(default_factory=list)

    tier: ClassVar[Tier] = "exact"
    later_keys: ClassVar[tuple[str, ...]] = ("any_of",)

    @model_validator(mode="after")
    def _one_expectation(self) -> ExactCheck:
        if self.any_of is not None and "expected" in self.model_fields_set:
            raise ValueError("give expected or any_of, not both: any_of lists every accepted output")
        if self.any_of is None and "expected" not in self.model_fields_set:
            raise ValueError("expected is missing: give expected, or any_of (a list of accepted outputs)")
        return self

    @model_serializer(mode="wrap")
    def _keeps_expected(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = self._without_unused_later_keys(handler)
        if self.any_of is None:
            data.setdefault("expected", self.expected)  # an expected null is still the expectation
        else:
            data.pop("expected", None)
        return data

    @property
    def accepted(self) -> list[Any]:
        """Every output that passes (before normalising)."""
        return list(self.any_of) if self.any_of is not None else [self.expected]


class SchemaCheck(_Check):
    kind: Literal["schema"] = "schema"
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    model: str | None = None

    tier: ClassVar[Tier] = "exact"
    rank: ClassVar[int | None] = 0


def _fact_problem(facts: list[Any]) -> str | None:
    if not facts:
        return "the list of facts is empty"
    for i, fact in enumerate(facts):
        options = [fact] if isinstance(fact, str) else fact
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            return (
                f"fact {i} is a {type(fact).__name__}; a fact is a phrase, or a list of alternative phrases"
            )
        if not options or any(not o.strip() for o in options):
            return f"fact {i} is empty; a fact is a phrase, or a non-empty list of alternatives"
    return None


class ContainsAllCheck(_Check):
    kind: Literal["contains_all"] = "contains_all"
    facts: list[str | list[str]] | None = Field(default=None, min_length=1)
    facts_from: InputPath | None = Field(default=None, description="Where the case's input lists the facts.")

    later_keys: ClassVar[tuple[str, ...]] = ("facts", "facts_from")

    @field_validator("facts")
    @classmethod
    def _no_empty_facts(cls, v: list[str | list[str]] | None) -> list[str | list[str]] | None:
        problem = None if v is None else _fact_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _one_source(self) -> ContainsAllCheck:
        if (self.facts is None) == (self.facts_from is None):
            raise ValueError(
                "give facts (a list) or facts_from (where the input lists them, e.g. 'input.policy_facts'), "
                + ("not both" if self.facts is not None else "one of the two")
            )
        return self

    def facts_in(self, case_input: Any) -> list[str | list[str]]:
        """The facts to look for: the check's own, or the list facts_from names in the case's input."""
        if self.facts is not None:
            return self.facts
        assert self.facts_from is not None
        facts = _list_in_input(case_input, self.facts_from, "facts")
        problem = _fact_problem(facts)
        if problem:
            raise ValueError(f"{self.facts_from}: {problem}")
        return facts

    def input_problems(self, case_input: Any) -> list[tuple[str, str, str]]:
        try:
            self.facts_in(case_input)
        except ValueError as exc:
            return [
                ("facts_from", str(exc), "point facts_from at a list of phrases in the input, or give facts")
            ]
        return []


class ContainsNoneCheck(_Check):
    kind: Literal["contains_none"] = "contains_none"
    phrases: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)


class RegexCheck(_Check):
    kind: Literal["regex"] = "regex"
    pattern: RegexPattern
    flags: str = ""
    must_match: bool = True

    @field_validator("flags")
    @classmethod
    def _known_flags(cls, v: str) -> str:
        unknown = set(v) - set("imsx")
        if unknown:
            raise ValueError(f"unknown regex flag(s) {''.join(sorted(unknown))!r}; use i, m, s or x")
        return v


class MaxWordsCheck(_Check):
    kind: Literal["max_words"] = "max_words"
    limit: int = Field(ge=0)


class MinWordsCheck(_Check):
    kind: Literal["min_words"] = "min_words"
    limit: int = Field(ge=0)


class JsonValidCheck(_Check):
    kind: Literal["json_valid"] = "json_valid"


class SumsCheck(_Check):
    kind: Literal["sums"] = "sums"
    items: str = "line_items"
    quantity: str = "quantity"
    unit_price: str = "unit_price"
    amount: str = "amount"
    total: str = "total"
    add: list[str] = Field(default_factory=list)
    subtract: list[str] = Field(default_factory=list)
    included: list[str] = Field(
        default_factory=list, description="Amounts already inside the item amounts (VAT-inclusive prices)."
    )
    tolerance: float = Field(default=0.01, ge=0)

    later_keys: ClassVar[tuple[str, ...]] = ("included",)

    @model_validator(mode="after")
    def _each_key_once(self) -> SumsCheck:
        seen: dict[str, str] = {}
        for role in ("add", "subtract", "included"):
            for key in getattr(self, role):
                if key in seen:
                    raise ValueError(f"{key!r} is in both {seen[key]} and {role}: an amount counts one way")
                seen[key] = role
        return self


class CitationsSubsetCheck(_Check):
    kind: Literal["citations_subset"] = "citations_subset"
    retrieved: list[str] | None = None
    retrieved_from: str = "chunks"
    pattern: RegexPattern = r"\[([^\[\]\s]+)\]"
    require_citation: bool = False
    must_not_cite: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)

    later_keys: ClassVar[tuple[str, ...]] = ("must_not_cite",)

    @field_validator("retrieved_from")
    @classmethod
    def _path(cls, v: str) -> str:
        if not v or any(not part for part in v.split(".")):
            raise ValueError("retrieved_from is a path into the case's input, e.g. 'input.chunks'")
        return v

    def retrieved_in(self, case_input: Any) -> list[str]:
        """The retrieved ids: the check's own, or those at retrieved_from (ids, or objects with an `id`)."""
        if self.retrieved is not None:
            return list(self.retrieved)
        ids: list[str] = []
        for i, item in enumerate(_list_in_input(case_input, self.retrieved_from, "retrieved ids")):
            if isinstance(item, dict) and "id" in item:
                ids.append(str(item["id"]))
            elif isinstance(item, str | int) and not isinstance(item, bool):
                ids.append(str(item))
            else:
                raise ValueError(f"{self.retrieved_from}[{i}] is neither an id nor an object with an 'id'")
        return ids

    def input_problems(self, case_input: Any) -> list[tuple[str, str, str]]:
        try:
            self.retrieved_in(case_input)
        except ValueError as exc:
            return [
                (
                    "retrieved_from",
                    str(exc),
                    "point retrieved_from at the input's list of chunks or ids (e.g. 'input.chunks'), "
                    "or list the ids in retrieved",
                )
            ]
        return []


class NoEmailExceptCheck(_Check):
    kind: Literal["no_email_except"] = "no_email_except"
    allowed: list[str] = Field(default_factory=list)
    allowed_from: InputPath | None = Field(
        default=None, description="Where the input lists allowed addresses."
    )

    later_keys: ClassVar[tuple[str, ...]] = ("allowed_from",)

    def allowed_in(self, case_input: Any) -> list[str]:
        """The allowed addresses: the check's own plus any the input lists at allowed_from."""
        if self.allowed_from is None:
            return list(self.allowed)
        found = _list_in_input(case_input, self.allowed_from, "email addresses")
        bad = [i for i, a in enumerate(found) if not isinstance(a, str)]
        if bad:
            raise ValueError(f"{self.allowed_from}[{bad[0]}] is not an email address (a string)")
        return [*self.allowed, *found]

    def input_problems(self, case_input: Any) -> list[tuple[str, str, str]]:
        try:
            self.allowed_in(case_input)
        except ValueError as exc:
            return [("allowed_from", str(exc), "point allowed_from at a list of addresses in the input")]
        return []


class SqlRowsMatchCheck(_Check):
    kind: Literal["sql_rows_match"] = "sql_rows_match"
    fixture: str = Field(min_length=1)
    reference_sql: str = Field(min_length=1)
    ordered: bool = False


class UserCheck(_Check):
    """A check registered with ``@evalkit.check(name)`` in the suite's own Python file; `name` picks it."""

    kind: Literal["user"] = "user"
    name: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


class JudgeCheck(_Check):
    kind: Literal["judge"] = "judge"
    rubric: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    reference: str | list[str] | None = None

    tier: ClassVar[Tier] = "judge"


class ToolCalledCheck(_Check):
    """The output's tool calls include one to `tool` (with these arguments, when given)."""

    kind: Literal["tool_called"] = "tool_called"
    tool: str = Field(min_length=1)
    arguments: dict[str, Any] | None = Field(
        default=None, description="Arguments the call must have: all of them (subset) or only them (exact)."
    )
    match: Literal["subset", "exact"] = "subset"
    arguments_schema: dict[str, Any] | None = Field(
        default=None, description="A JSON Schema the call's arguments must validate against."
    )


class ToolNotCalledCheck(_Check):
    """The output's tool calls include none to `tool`."""

    kind: Literal["tool_not_called"] = "tool_not_called"
    tool: str = Field(min_length=1)


class ToolSequenceCheck(_Check):
    """The tools are called in this order: `strict`, as exactly these calls; else in order with others between."""

    kind: Literal["tool_sequence"] = "tool_sequence"
    tools: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1)
    strict: bool = False


class MaxToolCallsCheck(_Check):
    """At most `limit` tool calls (to `tool`, when given)."""

    kind: Literal["max_tool_calls"] = "max_tool_calls"
    limit: int = Field(ge=0)
    tool: str | None = None


# The one list of check kinds: the case format's union, the list of kinds and (in evalkit.graders) the grader
# dispatch are all derived from it. A new kind is a model here plus one `@grades(Model)` function there.
CHECK_MODELS: tuple[type[_Check], ...] = (
    ExactCheck,
    SchemaCheck,
    ContainsAllCheck,
    ContainsNoneCheck,
    RegexCheck,
    MaxWordsCheck,
    MinWordsCheck,
    JsonValidCheck,
    SumsCheck,
    CitationsSubsetCheck,
    NoEmailExceptCheck,
    SqlRowsMatchCheck,
    UserCheck,
    ToolCalledCheck,
    ToolNotCalledCheck,
    ToolSequenceCheck,
    MaxToolCallsCheck,
    JudgeCheck,
)


def kind_of(model: type[_Check]) -> str:
    """The `kind` a check model is written with (its Literal's one value)."""
    (kind,) = get_args(model.model_fields["kind"].annotation)
    return str(kind)


CHECK_KINDS: tuple[str, ...] = tuple(kind_of(m) for m in CHECK_MODELS)

if TYPE_CHECKING:
    Check = _Check
else:
    Check = Annotated[Union[CHECK_MODELS], Field(discriminator="kind")]  # noqa: UP007


def covers(outer: str | None, inner: str | None) -> bool:
    """True when a check on field `outer` looks at (part of) what a check on `inner` looks at."""
    if outer is None or inner is None:
        return True
    return outer == inner or inner.startswith(outer + ".") or outer.startswith(inner + ".")
