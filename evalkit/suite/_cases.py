"""Golden cases: the three written forms, their normalised model, and line-located validation.

A case is written in the course form (`grader` + `expected`), the blog form (`expected_exact` | `must_contain` |
`rubric`) or the multi-check form (`checks`). All three normalise to :class:`Case`, whose `checks` list is what
the graders and the runner see.
"""

from __future__ import annotations

import difflib
import functools
import json
import unicodedata
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from evalkit._hashing import content_hash
from evalkit._records import DEEP_HINT as _DEEP_HINT
from evalkit._records import decode_line, encode_line, strip_bom
from evalkit.errors import Problem
from evalkit.suite._checks import (
    CHECK_KINDS,
    CHECK_MODELS,
    Check,
    ContainsAllCheck,
    ExactCheck,
    JudgeCheck,
    Normalizer,
    SchemaCheck,
)

Split = Literal["dev", "holdout"]
GRADERS = ("exact", "schema", "contains", "code", "judge")
BLOG_KEYS = ("expected_exact", "must_contain", "rubric")


class ToolResult(BaseModel):
    """A recorded answer to a tool call: for calls of `tool` whose arguments include `arguments` (none given:
    any call of `tool` the entries with arguments do not match)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    tool: str = Field(min_length=1)
    arguments: dict[str, Any] | None = None
    result: Any


class Case(BaseModel):
    """One golden case, normalised: an input and the checks its output must pass."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    input: Any
    checks: list[Check] = Field(min_length=1)
    slice: str = Field(default="unsliced", min_length=1)
    source: str | None = None
    tags: list[str] = Field(default_factory=list)
    notes: str | None = None
    split: Split = "dev"
    tool_results: list[ToolResult] = Field(default_factory=list)
    user_turns: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    """Scripted follow-up user messages: after each reply the next is sent, and the whole conversation is graded."""

    def to_record(self) -> dict[str, Any]:
        """The case in the multi-check form, ready to write as one JSONL line."""
        record: dict[str, Any] = {"id": self.id, "input": self.input, "slice": self.slice}
        for key in ("source", "notes"):
            if getattr(self, key) is not None:
                record[key] = getattr(self, key)
        if self.tags:
            record["tags"] = list(self.tags)
        if self.split != "dev":
            record["split"] = self.split
        if self.tool_results:
            record["tool_results"] = [r.model_dump(exclude_none=True) for r in self.tool_results]
        if self.user_turns:
            record["user_turns"] = list(self.user_turns)
        record["checks"] = [
            c.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_defaults=True)
            | {"kind": c.kind}
            for c in self.checks
        ]
        return record

    def version_record(self) -> dict[str, Any]:
        """What the suite version hashes: everything that changes what is scored or how it is reported."""
        # a case without recorded tool results hashes as it did before they existed
        exclude = {"source", "notes", "tags"} | {
            k for k in ("tool_results", "user_turns") if not getattr(self, k)
        }
        return self.model_dump(mode="json", by_alias=True, exclude=exclude)


_CHECKS = TypeAdapter(list[Check])
_ONE_CHECK = TypeAdapter(Check)


class _Common(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)

    id: str = Field(min_length=1)
    input: Any
    source: str | None = None
    tags: list[str] = Field(default_factory=list)
    notes: str | None = None
    split: Split = "dev"
    tool_results: list[ToolResult] = Field(default_factory=list)
    user_turns: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _id_is_clean(cls, v: str) -> str:
        if v != v.strip() or any(ch in v for ch in "\n\t"):
            raise ValueError("an id must not start or end with spaces or contain tabs/newlines")
        bad = [ch for ch in v if unicodedata.category(ch) in ("Cc", "Cf")]
        if bad:
            raise ValueError(
                f"an id must not contain control or invisible characters (found {', '.join(map(ascii, bad))}, "
                "e.g. NUL or a right-to-left override): it would print as another id; use visible characters"
            )
        return v


class _CheckForm(_Common):
    checks: list[Check] = Field(min_length=1)
    slice: str = Field(default="unsliced", min_length=1)


class _CourseForm(_Common):
    grader: str
    expected: Any
    slice: str = Field(default="unsliced", min_length=1)
    normalize: list[Normalizer] = Field(default_factory=list)
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    field: str | None = None

    @field_validator("grader")
    @classmethod
    def _known_grader(cls, v: str) -> str:
        if v not in GRADERS:
            raise ValueError(f"unknown grader {v!r}; use one of {', '.join(GRADERS)}")
        return v


class _BlogForm(_Common):
    slice: str = Field(default="unsliced", min_length=1)
    expected_exact: Any = None
    must_contain: list[str | list[str]] | None = None
    rubric: str | list[str] | None = None
    normalize: list[Normalizer] = Field(default_factory=list)


_HINTS = {
    "extra_forbidden": "remove the key or fix its spelling",
    "missing": "add it",
    "too_short": "give at least one item",
    "string_too_short": "give a non-empty string",
    "union_tag_invalid": f"use one of: {', '.join(CHECK_KINDS)}",
    "union_tag_not_found": "add a 'kind' naming the check",
    "literal_error": "use one of the allowed values",
    "value_error": "",
}


@functools.cache
def _known_keys() -> tuple[str, ...]:
    """Every key a case or a check may have: the vocabulary for "did you mean" hints."""
    keys = {"category"}
    models: tuple[type[BaseModel], ...] = (_CheckForm, _CourseForm, _BlogForm, *CHECK_MODELS)
    for model in models:
        for name, info in model.model_fields.items():
            keys.add(info.alias or name)
    return tuple(sorted(keys))


def _loc_to_field(loc: tuple[int | str, ...], prefix: str = "") -> str:
    parts: list[str] = []
    prev_int = False
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
            prev_int = True
            continue
        # pydantic puts the discriminator's tag (and union member names) in the path; people never wrote those
        if (prev_int or not parts) and item in CHECK_KINDS:
            prev_int = False
            continue
        if item in ("str", "list[str]") or item.startswith(("function-", "list[")):
            continue
        parts.append(("." if parts else "") + item)
        prev_int = False
    text = "".join(parts)
    if prefix:
        text = prefix + ("" if text.startswith("[") or not text else ".") + text
    return text or prefix or "(case)"


def _pydantic_problems(exc: ValidationError, path: str, line: int, prefix: str = "") -> list[Problem]:
    out: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for err in exc.errors(include_url=False):
        field = _loc_to_field(tuple(err["loc"]), prefix)
        etype = err["type"]
        msg = err["msg"]
        hint = _HINTS.get(etype, "")
        if etype == "extra_forbidden":
            msg = "unknown key"
            near = difflib.get_close_matches(str(err["loc"][-1]), _known_keys(), n=1, cutoff=0.75)
            if near:
                hint = f"did you mean {near[0]!r}?"
        elif etype == "missing":
            msg = "required field is missing"
        elif etype == "union_tag_invalid":
            tag = (err.get("ctx") or {}).get("tag", "?")
            msg = f"unknown check kind {tag!r}"
            field = field.removesuffix(".kind") + ".kind" if not field.endswith(".kind") else field
        elif etype == "union_tag_not_found":
            msg = "a check needs a 'kind'"
        elif etype.startswith("value_error"):
            msg = msg.removeprefix("Value error, ")
            if field == "id":
                hint = "write the id in visible characters, with no spaces around it"
            if "regular expression" in msg:
                hint = "escape special characters with a backslash (in JSON, write \\\\ for one backslash)"
        key = (field, msg)
        if key in seen:
            continue
        seen.add(key)
        out.append(Problem(path, line, field, msg, hint))
    return out


def _checks_from_course(form: _CourseForm, path: str, line: int) -> tuple[list[Any], list[Problem]]:
    g, exp, fld = form.grader, form.expected, form.field
    if g == "exact":
        return [ExactCheck(field=fld, expected=exp, normalize=form.normalize)], []
    if g == "schema":
        if not isinstance(exp, dict):
            return [], [
                Problem(
                    path, line, "expected", "the schema grader expects an object", "give the expected object"
                )
            ]
        checks: list[Any] = [SchemaCheck(field=fld, json_schema=form.json_schema)]
        for key, value in exp.items():
            sub = f"{fld}.{key}" if fld else key
            checks.append(ExactCheck(field=sub, expected=value, normalize=form.normalize))
        return checks, []
    if g == "contains":
        facts = exp.get("facts") if isinstance(exp, dict) else exp
        try:
            return [ContainsAllCheck.model_validate({"field": fld, "facts": facts})], []
        except ValidationError as exc:
            return [], _pydantic_problems(exc, path, line, "expected")
    if g == "judge":
        payload = exp if isinstance(exp, dict) else {"rubric": exp}
        try:
            return [JudgeCheck.model_validate({"field": fld, **payload})], []
        except ValidationError as exc:
            return [], _pydantic_problems(exc, path, line, "expected")
    # code: one check object or a list of them
    items = exp if isinstance(exp, list) else [exp]
    try:
        parsed = _CHECKS.validate_python(
            [{"field": fld, **i} if isinstance(i, dict) and fld else i for i in items]
        )
    except ValidationError as exc:
        return [], _pydantic_problems(exc, path, line, "expected")
    if any(c.tier != "code" for c in parsed):
        return [], [
            Problem(
                path,
                line,
                "expected",
                "the code grader takes code checks only",
                "use the checks form to mix kinds",
            )
        ]
    return list(parsed), []


# A case's written form (the object it was parsed from, and the line when read from a file), kept beside the
# case rather than in it, so two cases that mean the same compare equal whatever form each was written in.
# Weak, so a case's form goes when the case does.
_WRITTEN: dict[int, tuple[weakref.ref[Case], dict[str, Any], str | None]] = {}


def _remember(case: Case, obj: dict[str, Any], text: str | None = None) -> None:
    key = id(case)

    def forget(ref: weakref.ref[Case]) -> None:
        entry = _WRITTEN.get(key)
        if entry is not None and entry[0] is ref:
            del _WRITTEN[key]

    _WRITTEN[key] = (weakref.ref(case, forget), obj, text)


def written_form(case: Case) -> dict[str, Any] | None:
    """The object `case` was parsed from by :func:`parse_case` (its form and key order), or None."""
    entry = _WRITTEN.get(id(case))
    return entry[1] if entry is not None and entry[0]() is case else None


def parse_case(obj: Any, path: str = "<memory>", line: int = 0) -> tuple[Case | None, list[Problem]]:
    """Normalise one decoded JSON line into a Case, or return every problem found in it.

    The case remembers `obj` as its written form (:func:`written_form`), so saving it keeps the form and key
    order it was written in.
    """
    case, problems = _parse_case(obj, path, line)
    if case is not None:
        _remember(case, obj)
    return case, problems


_TURN_HINT = (
    'a conversation is a list of {"role": "user" or "assistant", "content": ...}, ending with a user turn'
)


def is_conversation(value: Any) -> bool:
    """Whether a case input is a conversation: a non-empty list of objects that each have a ``role``."""
    return isinstance(value, list) and bool(value) and all(isinstance(t, dict) and "role" in t for t in value)


def conversation_problems(value: Any) -> list[tuple[str, str, str]]:
    """(field, message, hint) for each malformed turn of a conversation input; none for any other input.

    >>> conversation_problems([{"role": "user", "content": "hi"}, {"role": "bot", "content": "yo"}])[0][:2]
    ('input[1].role', "must be 'user' or 'assistant', got 'bot'")
    """
    if not is_conversation(value):
        return []
    found: list[tuple[str, str, str]] = []
    for i, turn in enumerate(value):
        role, content = turn.get("role"), turn.get("content")
        if role not in ("user", "assistant"):
            found.append((f"input[{i}].role", f"must be 'user' or 'assistant', got {role!r}", _TURN_HINT))
        if "content" not in turn:
            found.append((f"input[{i}].content", "required field is missing", _TURN_HINT))
        elif not (isinstance(content, str) and content) and not (isinstance(content, list) and content):
            found.append(
                (f"input[{i}].content", "must be non-empty text or a list of content blocks", _TURN_HINT)
            )
        extra = sorted(set(turn) - {"role", "content"})
        if extra:
            found.append((f"input[{i}]", f"unknown key(s) {', '.join(extra)}", _TURN_HINT))
        if i and role == value[i - 1].get("role") and role in ("user", "assistant"):
            found.append(
                (
                    f"input[{i}].role",
                    f"two {role} turns in a row",
                    "merge them, or put the other turn between",
                )
            )
    if value[0].get("role") != "user":
        found.append(("input[0].role", "a conversation starts with a user turn", _TURN_HINT))
    if value[-1].get("role") != "user":
        found.append(
            (
                f"input[{len(value) - 1}].role",
                "the last turn is the one the system answers: a user turn",
                _TURN_HINT,
            )
        )
    return found


def _parse_case(obj: Any, path: str, line: int) -> tuple[Case | None, list[Problem]]:
    if not isinstance(obj, dict):
        return None, [
            Problem(
                path,
                line,
                "(case)",
                f"a case is a JSON object, got {type(obj).__name__}",
                'write one case per line as an object: {"id": ..., "input": ..., "checks": [...]}',
            )
        ]
    keys = set(obj)
    problems: list[Problem] = []
    if "id" not in obj:
        problems.append(Problem(path, line, "id", "required field is missing", "give every case a unique id"))
    problems.extend(Problem(path, line, f, m, h) for f, m, h in conversation_problems(obj.get("input")))
    blog_keys = [k for k in BLOG_KEYS if k in keys]
    if "checks" in keys and ({"grader", "expected"} & keys or blog_keys):
        problems.append(
            Problem(
                path,
                line,
                "checks",
                "mixes the checks form with grader/expected or blog keys",
                "use one form",
            )
        )
        return None, problems
    if len(blog_keys) > 1:
        problems.append(
            Problem(
                path,
                line,
                ", ".join(blog_keys),
                "a case takes exactly one of expected_exact, must_contain, rubric",
                "split it into separate cases or use the checks form",
            )
        )
        return None, problems

    if "checks" in keys:
        model: type[_Common] = _CheckForm
    elif "grader" in keys or "expected" in keys:
        model = _CourseForm
    elif blog_keys or "category" in keys:
        model = _BlogForm
    else:
        problems.append(
            Problem(
                path,
                line,
                "(case)",
                "no way to grade this case",
                "add 'checks', or 'grader' + 'expected', or one of expected_exact / must_contain / rubric",
            )
        )
        return None, problems
    if "id" not in obj:
        obj = {**obj, "id": "?"}  # already reported; keep validating the rest of the line
    if "category" in obj:  # an alias of slice, in every form
        if "slice" in obj:
            return None, [
                *problems,
                Problem(
                    path,
                    line,
                    "category",
                    "give slice or category, not both",
                    "keep one (they mean the same)",
                ),
            ]
        obj = {("slice" if k == "category" else k): v for k, v in obj.items()}
    try:
        form = model.model_validate(obj)
    except ValidationError as exc:
        return None, problems + _pydantic_problems(exc, path, line)
    if problems:
        return None, problems

    common = {
        k: getattr(form, k)
        for k in ("id", "input", "source", "tags", "notes", "split", "tool_results", "user_turns")
    }
    checks: list[Any]
    if isinstance(form, _CheckForm):
        checks, slice_ = form.checks, form.slice
    elif isinstance(form, _CourseForm):
        checks, extra = _checks_from_course(form, path, line)
        if extra:
            return None, extra
        slice_ = form.slice
    else:
        assert isinstance(form, _BlogForm)
        slice_ = form.slice
        key = blog_keys[0] if blog_keys else None
        try:
            if key == "expected_exact":
                checks = [ExactCheck(expected=form.expected_exact, normalize=form.normalize)]
            elif key == "must_contain":
                checks = [ContainsAllCheck(facts=form.must_contain or [])]
            elif key == "rubric":
                rubric = [form.rubric] if isinstance(form.rubric, str) else (form.rubric or [])
                checks = [JudgeCheck(rubric=rubric)]
            else:
                return None, [
                    Problem(
                        path, line, "(case)", "no expectation", "add expected_exact, must_contain or rubric"
                    )
                ]
        except ValidationError as exc:
            # the blog form has one key per expectation, so that key is the field to name
            return None, [
                Problem(p.path, p.line, key or p.field, p.message, p.hint)
                for p in _pydantic_problems(exc, path, line)
            ]
    try:
        return Case(checks=checks, slice=slice_, **common), []
    except ValidationError as exc:
        return None, _pydantic_problems(exc, path, line)


def iter_jsonl(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) for non-blank lines, numbering from 1."""
    with path.open("r", encoding="utf-8") as fh:
        for number, text in enumerate(fh, start=1):
            if number == 1:
                text = strip_bom(text)  # what Windows editors write
            if text.strip():
                yield number, text


def read_cases(path: Path, display: str | None = None) -> tuple[list[tuple[int, Case]], list[Problem]]:
    """Read every line of a JSONL file; return the cases with their lines and every problem found."""
    shown = display or str(path)
    cases: list[tuple[int, Case]] = []
    problems: list[Problem] = []
    first_line: dict[str, int] = {}
    try:
        lines = list(iter_jsonl(path))
    except UnicodeDecodeError as exc:
        return [], [
            Problem(
                shown, None, "(file)", f"not UTF-8 text ({exc.reason} at byte {exc.start})", "save as UTF-8"
            )
        ]
    except OSError as exc:
        return [], [Problem(shown, None, "(file)", f"cannot read: {exc.strerror}", "check the path")]
    if not lines:
        problems.append(Problem(shown, None, "(file)", "no cases", "add one JSON object per line"))
    for number, text in lines:
        obj, bad = decode_line(text)
        if bad is not None:
            problems.append(Problem(shown, number, bad[0], bad[1], bad[2]))
            continue
        try:
            case, found = parse_case(obj, shown, number)
        except RecursionError:
            found, case = [Problem(shown, number, "(case)", "nested too deeply to check", _DEEP_HINT)], None
        problems.extend(found)
        if case is not None:
            _remember(case, obj, text.rstrip("\r\n"))
        raw_id = obj.get("id") if isinstance(obj, dict) else None
        if isinstance(raw_id, str) and raw_id:
            if raw_id in first_line:
                problems.append(
                    Problem(
                        shown,
                        number,
                        "id",
                        f"duplicate id {raw_id!r} (first used on line {first_line[raw_id]})",
                        "ids must be unique within a suite; rename one",
                    )
                )
                continue
            first_line[raw_id] = number
        if case is not None:
            cases.append((number, case))
    return cases, problems


def cases_to_jsonl(cases: Iterable[Case]) -> str:
    """Serialise cases in stable (id) order, one multi-check-form object per line."""
    ordered = sorted(cases, key=lambda c: c.id)
    return "".join(encode_line(c.to_record()) + "\n" for c in ordered)


def case_line(case: Case) -> str:
    """One case as a JSONL line (no newline): as it was written (the very line, when read from a file) while
    that still says the same, else in the multi-check form."""
    entry = _WRITTEN.get(id(case))
    if entry is not None and entry[0]() is case:
        _, obj, text = entry
        # the object may have been changed since: write the line, or the object, only if it still means this case
        if text is not None:
            decoded, bad = decode_line(text)
            if bad is None and _parse_case(decoded, "<memory>", 0)[0] == case:
                return text
        if _parse_case(obj, "<memory>", 0)[0] == case:
            return json.dumps(obj, ensure_ascii=False)
    return json.dumps(case.to_record(), ensure_ascii=False)


def cases_version(cases: Iterable[Case], extra: Any = None) -> str:
    """A short hash of what the cases mean: independent of key order, whitespace and line order."""
    records = sorted((c.version_record() for c in cases), key=lambda r: r["id"])
    return content_hash({"cases": records, "extra": extra}, 12)
