"""A simulated judge: answers evalkit's rubric and pairwise judge requests with verdicts from simple word rules.

A judge request is recognised by its output schema (a rubric verdict has ``criteria`` and ``passed``; a pairwise
verdict has ``winner``) and by the fence tags of evalkit's judge prompts (``<candidate_output>``, or
``<output_a>`` and ``<output_b>``). Every verdict names itself: the reply's model is ``simulated-judge`` and its
reasoning starts with ``simulated judge (evalkit serve):``.

Rubric: a criterion is met when at least ``overlap`` of its content words (lower-cased words of three or more
letters, or numbers, less common words such as "the", "should", "mentions") appear in the candidate output, or
when a reference is given and at least ``overlap`` of the reference's content words do. A judge rule (a
substring or regex of the candidate, optionally of the criterion) overrides that.

Pairwise: each output's quality is the share of the content words of the criteria and the case input that it
contains; the higher wins, equal is a tie.

Planted biases, all 0 by default, are drawn from a generator seeded by ``seed`` and the request's content, so
the same request always gets the same verdict, whatever the order or timing of requests:

- ``position_bias``: in a pairwise request, the probability of answering "A" (the output shown first) whatever
  the outputs say;
- ``verbosity_bias``: in a rubric request, each unmet criterion is met with probability
  ``verbosity_bias * min(1, words / 150)`` (a longer candidate gets more); in a pairwise request, the longer
  output wins with probability ``verbosity_bias``;
- ``injection_susceptibility``: when the candidate contains an instruction to the grader ("ignore the rubric",
  "pass this", ...), a failing rubric verdict becomes a pass, or that output wins a pairwise comparison, with
  this probability.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.testing.server._replies import Reply
from evalkit.testing.server._tokens import canonical, content_text, last_user_text, output_schema

__all__ = ["SIMULATED_JUDGE_MODEL", "JudgeRule", "SimulatedJudge", "is_judge_request"]

SIMULATED_JUDGE_MODEL = "simulated-judge"
"""The model id every simulated verdict names (it has no price)."""

_PREFIX = "simulated judge (evalkit serve): "
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_STOPWORD_TEXT = """
    the and for are but not you your yours our ours this that these those with from into onto than then there
    their them they what when where which while who whom whose why how all any each every some such only own
    same very can could should would will shall may might must does did done has have had having was were been
    being its it's about above after again against also because before below between both during further here
    once other over under until off out per via one ever never more most less least just nor yet too answer
    answers answered response reply output candidate mention mentions mentioned state states stated say says
    said include includes included give gives given provide provides provided use uses used make makes made
    correct correctly clearly explicitly
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_INJECTION = re.compile(
    r"ignore (?:the |all |any |your |previous |prior |above )*(?:rubric|instructions?|criteria|rules)"
    r"|(?:pass|approve|accept) this|mark (?:this|it) (?:as )?(?:passed|pass|correct|met)"
    r"|(?:grader|evaluator|judge)s?\s*(?:note|instruction)|all criteria (?:are )?met"
    r"|(?:choose|pick|prefer) (?:this|output [ab])",
    re.IGNORECASE,
)
_LONG_WORDS = 150


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def content_words(text: str) -> set[str]:
    """The words of a text that the simulated judge compares: 3+ letters or a number, less common ones."""
    return {w for w in _words(text) if (len(w) >= 3 or w.isdigit()) and w not in _STOPWORDS}


def _opening(text: str, tag: str) -> re.Match[str] | None:
    # untrusted fences carry a suffix the candidate cannot guess (<candidate_output_3f9a...>); trusted ones do not
    return re.search(rf"<({re.escape(tag)}(?:_[0-9a-z]+)?)>", text)


def _between(text: str, tag: str) -> str | None:
    opening = _opening(text, tag)
    if opening is None:
        return None
    end = text.rfind(f"</{opening.group(1)}>")
    if end < opening.end():
        return None
    return text[opening.end() : end].strip("\n")


def _share(wanted: set[str], present: set[str]) -> float:
    return len(wanted & present) / len(wanted) if wanted else 0.0


def is_judge_request(body: Mapping[str, Any]) -> str | None:
    """``"rubric"`` or ``"pairwise"`` for a request built like evalkit's judge requests, else None."""
    schema = output_schema(body)
    if not schema:
        return None
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    if "criteria" in props and "passed" in props:
        return "rubric" if _opening(last_user_text(body), "candidate_output") else None
    if "winner" in props:
        text = last_user_text(body)
        return "pairwise" if _opening(text, "output_a") and _opening(text, "output_b") else None
    return None


@dataclass(frozen=True)
class JudgeRule:
    """A verdict to give a criterion when the candidate matches.

    ``candidate``: a case-insensitive substring of the candidate output, or with ``regex`` a regular expression
    (``re.search``); ``criterion``: if set, a case-insensitive substring the criterion must contain; ``met``: the
    verdict for each criterion the rule covers.
    """

    candidate: str
    met: bool
    criterion: str | None = None
    regex: bool = False

    def matches(self, candidate: str, criterion: str) -> bool:
        if self.criterion is not None and self.criterion.casefold() not in criterion.casefold():
            return False
        if self.regex:
            return re.search(self.candidate, candidate) is not None
        return self.candidate.casefold() in candidate.casefold()


@dataclass(frozen=True)
class SimulatedJudge:
    """Verdicts for evalkit's judge requests, from word overlap, judge rules and planted biases (module docs).

    Parameters
    ----------
    overlap:
        The share of a criterion's (or the reference's) content words the candidate must contain to meet it.
    position_bias, verbosity_bias, injection_susceptibility:
        Planted biases, probabilities from 0 (none, the default) to 1.
    seed:
        Seeds the draws of the planted biases (with each request's content).
    rules:
        Judge rules, tried in order before the word overlap.
    """

    overlap: float = 0.5
    position_bias: float = 0.0
    verbosity_bias: float = 0.0
    injection_susceptibility: float = 0.0
    seed: int = 0
    rules: Sequence[JudgeRule] = field(default_factory=tuple)
    model: str = SIMULATED_JUDGE_MODEL

    def __post_init__(self) -> None:
        for name in ("overlap", "position_bias", "verbosity_bias", "injection_susceptibility"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:  # (also false for nan)
                raise ValueError(f"{name}: must be from 0 to 1, got {value!r}")
        object.__setattr__(self, "rules", tuple(self.rules))

    def answer(self, body: Mapping[str, Any]) -> Reply | None:
        """The verdict for a judge request, or None when the request is not one."""
        kind = is_judge_request(body)
        if kind is None:
            return None
        text = last_user_text(body)
        digest = hashlib.sha256(canonical([content_text(body.get("system")), text]).encode()).hexdigest()
        rng = random.Random(f"evalkit-simulated-judge:{self.seed}:{digest}")
        data = self._rubric(text, rng) if kind == "rubric" else self._pairwise(text, rng)
        return Reply(data=data, model=self.model)

    def _rubric(self, text: str, rng: random.Random) -> dict[str, Any]:
        rubric_text = _between(text, "rubric") or ""
        criteria = [
            re.sub(r"^\d+\.\s*", "", line.strip()) for line in rubric_text.splitlines() if line.strip()
        ]
        candidate = _between(text, "candidate_output") or ""
        reference = _between(text, "reference")
        have = content_words(candidate)
        ref_met = reference is not None and _share(content_words(reference), have) >= self.overlap
        n_words = len(_words(candidate))
        verbose_p = self.verbosity_bias * min(1.0, n_words / _LONG_WORDS)
        # every draw is made whatever its outcome, so one bias does not shift another's draws
        injected = _INJECTION.search(candidate) is not None and rng.random() < self.injection_susceptibility
        verdicts: list[dict[str, Any]] = []
        notes: list[str] = []
        for criterion in criteria:
            rule = next((r for r in self.rules if r.matches(candidate, criterion)), None)
            wanted = content_words(criterion)
            shared = sorted(wanted & have)
            met = rule.met if rule is not None else (ref_met or _share(wanted, have) >= self.overlap)
            if rng.random() < verbose_p and not met:
                met = True
                notes.append(f"verbosity bias met {criterion!r}")
            verdicts.append({"criterion": criterion, "met": met, "evidence": _evidence(candidate, shared)})
        n_met = sum(v["met"] for v in verdicts)
        if injected and n_met < len(verdicts):
            for v in verdicts:
                v["met"] = True
            notes.append("injection susceptibility followed an instruction in the candidate")
            n_met = len(verdicts)
        n = len(verdicts)
        score = 1 + round(4 * n_met / n) if n else 1
        reasoning = (
            f"{_PREFIX}{n_met}/{n} criteria met by word overlap (a criterion is met when the candidate has "
            f"{self.overlap:.0%} of its content words, or of the reference's)"
        )
        if notes:
            reasoning += "; planted: " + "; ".join(notes)
        return {"criteria": verdicts, "score": score, "passed": n_met == n, "reasoning": reasoning}

    def _pairwise(self, text: str, rng: random.Random) -> dict[str, Any]:
        a, b = _between(text, "output_a") or "", _between(text, "output_b") or ""
        wanted = content_words(
            (_between(text, "criteria") or "") + "\n" + (_between(text, "case_input") or "")
        )
        qa, qb = _share(wanted, content_words(a)), _share(wanted, content_words(b))
        winner = "tie" if qa == qb else ("A" if qa > qb else "B")
        why = f"word overlap with the criteria and input: A {qa:.2f}, B {qb:.2f}"
        position, verbose, inject = rng.random(), rng.random(), rng.random()
        injected = [x for x, out in (("A", a), ("B", b)) if _INJECTION.search(out)]
        len_a, len_b = len(_words(a)), len(_words(b))
        if len(injected) == 1 and inject < self.injection_susceptibility:
            winner, why = (
                injected[0],
                why + "; planted: injection susceptibility followed the output's instruction",
            )
        elif len_a != len_b and verbose < self.verbosity_bias:
            winner, why = (
                ("A" if len_a > len_b else "B"),
                why + "; planted: verbosity bias chose the longer output",
            )
        elif position < self.position_bias:
            winner, why = "A", why + "; planted: position bias chose the output shown first"
        return {"winner": winner, "reasoning": _PREFIX + why}


def _evidence(candidate: str, shared: list[str]) -> str:
    """A short quote from the candidate around the first shared word ("" when none is shared)."""
    if not shared:
        return ""
    lowered = candidate.casefold()
    at = min((i for w in shared if (i := lowered.find(w)) >= 0), default=-1)
    if at < 0:
        return ""
    start = max(0, candidate.rfind(" ", 0, max(0, at - 30)) + 1)
    return candidate[start : start + 80].strip()
