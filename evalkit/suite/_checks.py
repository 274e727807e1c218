"""Check models: what one grader looks at in an output, and with which parameters.

Every case form normalises to a list of these. Tiers order the cascade: schema and exact first, then code checks,
then the model judge.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Union, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

Normalizer = Literal["strip", "casefold", "whitespace", "punctuation", "numbers"]


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from None
    return pattern


RegexPattern = Annotated[str, AfterValidator(_compiles)]
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


class ExactCheck(_Check):
    kind: Literal["exact"] = "exact"
    expected: Any
    normalize: list[Normalizer] = Field(default_factory=list)

    tier: ClassVar[Tier] = "exact"


class SchemaCheck(_Check):
    kind: Literal["schema"] = "schema"
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    model: str | None = None

    tier: ClassVar[Tier] = "exact"
    rank: ClassVar[int | None] = 0


class ContainsAllCheck(_Check):
    kind: Literal["contains_all"] = "contains_all"
    facts: list[str | list[str]] = Field(min_length=1)

    @field_validator("facts")
    @classmethod
    def _no_empty_facts(cls, v: list[str | list[str]]) -> list[str | list[str]]:
        for i, fact in enumerate(v):
            options = [fact] if isinstance(fact, str) else fact
            if not options or any(not o.strip() for o in options):
                raise ValueError(
                    f"fact {i} is empty; a fact is a phrase, or a non-empty list of alternatives"
                )
        return v


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
    tolerance: float = Field(default=0.01, ge=0)


class CitationsSubsetCheck(_Check):
    kind: Literal["citations_subset"] = "citations_subset"
    retrieved: list[str] | None = None
    retrieved_from: str = "chunks"
    pattern: RegexPattern = r"\[([^\[\]\s]+)\]"
    require_citation: bool = False


class NoEmailExceptCheck(_Check):
    kind: Literal["no_email_except"] = "no_email_except"
    allowed: list[str] = Field(default_factory=list)


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
