"""A simulated judge: answers evalkit's rubric and pairwise judge requests with verdicts from simple word rules.

A judge request is recognised by its output schema (a rubric verdict has ``criteria`` and ``passed``; a pairwise
verdict has ``winner``) and by the fence tags of evalkit's judge prompts (``<candidate_output>``, or
``<output_a>`` and ``<output_b>``). Every verdict names itself: the reply's model is ``simulated-judge`` and its
reasoning starts with ``simulated judge (evalkit serve):``.

Rubric: a criterion is met when at least ``overlap`` of its content words (lower-cased words of three or more
letters, or numbers, less common words such as "the", "should", "mentions"; compared by a crude stem, so
"Thanks the reviewer" is met by "Thank you for your review") appear in the candidate output, or when a reference
is given and at least ``overlap`` of the reference's content words do. A negated criterion ("Does not promise a
refund", "Never ...", "Without ...", "Avoids ...") is met when what follows the negation is *not* there. A
criterion about language ("... in the customer's language", "same language as ...") is met when the candidate's
most likely language (by common words of English, German, French, Spanish, Portuguese, Italian and Dutch) is the
case input's. A criterion asking for grounding ("supported by the cited chunks", "per the policy given in the
input") is met when at least ``overlap`` of the candidate's content words are in the case input; "Answers the
question ..." when at least half of ``overlap`` of the input question's content words are in the candidate. A
candidate that is a tool-using system's transcript (JSON with ``tool_calls``) is read for criteria naming tools
(snake_case names): "Calls lookup_order before issue_refund" is met when both are called in that order, "Does not
call issue_refund" when it is not called, "Calls escalate_ticket" when it is. A
judge rule (a substring or regex of the candidate, optionally of the criterion) overrides all that. It cannot tell meaning: a paraphrase with other words fails, a negation inside the candidate ("we will not
refund") still counts its words as present, and tone, politeness or correctness are not judged.

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
import json
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


_SUFFIXES = ("ings", "ing", "ers", "er", "ies", "ied", "ed", "es", "s", "ly")


def _stem(word: str) -> str:
    """A crude stem, so that word forms meet: thanks/thank, reviewer/review, refunded/refund, replies/reply."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.isdigit():
            base = word[: -len(suffix)]
            return base + "y" if suffix in ("ies", "ied") else base
    return word


def _stems(words: set[str]) -> set[str]:
    return {_stem(w) for w in words}


_NEGATION = re.compile(
    r"^\s*(?:does not|doesn't|do not|don't|did not|must not|should not|shall not|is not|isn't|are not|aren't|"
    r"never|no|not|without|avoids?|avoiding|refrains? from)\b\s*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_ANSWERS_QUESTION = re.compile(r"\banswers? (?:the|their|a) question\b", re.IGNORECASE)
_GROUNDED = re.compile(
    r"\bsupported by\b|\bper the (?:policy|input|source)\b|\bgiven in the input\b|\bcited\b|"
    r"\baccording to the (?:input|policy|source|chunks?)\b",
    re.IGNORECASE,
)
_LANGUAGE_CRITERION = re.compile(r"\blanguage\b|\bsame language\b", re.IGNORECASE)
_LANGUAGE_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        [
            "the",
            "and",
            "you",
            "your",
            "is",
            "are",
            "we",
            "our",
            "for",
            "with",
            "this",
            "that",
            "have",
            "will",
            "thank",
            "please",
        ]
    ),
    "de": frozenset(
        [
            "der",
            "die",
            "das",
            "und",
            "sie",
            "ihr",
            "ist",
            "sind",
            "wir",
            "unser",
            "für",
            "mit",
            "nicht",
            "ich",
            "danke",
            "bitte",
            "ihre",
        ]
    ),
    "fr": frozenset(
        [
            "le",
            "la",
            "les",
            "et",
            "vous",
            "votre",
            "est",
            "sont",
            "nous",
            "notre",
            "pour",
            "avec",
            "pas",
            "je",
            "merci",
            "les",
            "une",
            "des",
        ]
    ),
    "es": frozenset(
        [
            "el",
            "la",
            "los",
            "las",
            "y",
            "usted",
            "su",
            "es",
            "son",
            "nosotros",
            "para",
            "con",
            "no",
            "yo",
            "gracias",
            "una",
            "por",
        ]
    ),
    "pt": frozenset(
        [
            "o",
            "a",
            "os",
            "as",
            "e",
            "você",
            "seu",
            "sua",
            "é",
            "são",
            "nós",
            "para",
            "com",
            "não",
            "eu",
            "obrigado",
            "obrigada",
            "uma",
        ]
    ),
    "it": frozenset(
        [
            "il",
            "lo",
            "la",
            "gli",
            "le",
            "e",
            "lei",
            "suo",
            "sua",
            "è",
            "sono",
            "noi",
            "per",
            "con",
            "non",
            "io",
            "grazie",
            "una",
        ]
    ),
    "nl": frozenset(
        [
            "de",
            "het",
            "een",
            "en",
            "u",
            "uw",
            "is",
            "zijn",
            "wij",
            "ons",
            "voor",
            "met",
            "niet",
            "ik",
            "dank",
            "bedankt",
            "graag",
        ]
    ),
}


def language_of(text: str) -> str:
    """The most likely language of a text by its common words (``en`` when nothing tells)."""
    words = _words(text)
    counts = {lang: sum(w in common for w in words) for lang, common in _LANGUAGE_WORDS.items()}
    best = max(counts, key=lambda lang: (counts[lang], lang == "en"))
    return best if counts[best] else "en"


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
        case_input = _between(text, "case_input") or ""
        have = content_words(candidate)
        have_stems = _stems(have)
        called = _called_tools(candidate)
        ref_met = (
            reference is not None and _share(_stems(content_words(reference)), have_stems) >= self.overlap
        )
        n_words = len(_words(candidate))
        verbose_p = self.verbosity_bias * min(1.0, n_words / _LONG_WORDS)
        # every draw is made whatever its outcome, so one bias does not shift another's draws
        injected = _INJECTION.search(candidate) is not None and rng.random() < self.injection_susceptibility
        verdicts: list[dict[str, Any]] = []
        notes: list[str] = []
        for criterion in criteria:
            rule = next((r for r in self.rules if r.matches(candidate, criterion)), None)
            negated = _NEGATION.match(criterion)
            wanted = content_words(negated.group("rest") if negated else criterion)
            shared = sorted(w for w in have if _stem(w) in _stems(wanted))
            present = _share(_stems(wanted), have_stems) >= self.overlap
            by_calls = _by_calls(criterion, negated is not None, called)
            if rule is not None:
                met = rule.met
            elif by_calls is not None:
                met = by_calls
            elif _LANGUAGE_CRITERION.search(criterion) and case_input:
                met = language_of(candidate) == language_of(case_input)
            elif _ANSWERS_QUESTION.search(criterion) and case_input:
                # the question's own words come back in an answer to it
                asked = _between(case_input, "question") or case_input
                met = _share(_stems(content_words(asked)), have_stems) >= self.overlap / 2
            elif _GROUNDED.search(criterion) and case_input:
                # grounded: what the candidate says is, word for word, mostly in the input it was given
                met = _share(have_stems, _stems(content_words(case_input))) >= self.overlap
            elif negated:
                met = not present  # what the criterion rules out is not there
            else:
                met = ref_met or present
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


_TOOL_NAME = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")


def _called_tools(candidate: str) -> list[str] | None:
    """The names of the tools a transcript candidate called, in order; None when it is not a transcript."""
    try:
        data = json.loads(candidate)
    except ValueError:
        return None
    calls = data.get("tool_calls") if isinstance(data, dict) else None
    if not isinstance(calls, list):
        return None
    return [str(c.get("name")) for c in calls if isinstance(c, dict)]


def _by_calls(criterion: str, negated: bool, called: list[str] | None) -> bool | None:
    """A criterion naming tools, judged on the calls (None: it names none, or the candidate is no transcript)."""
    named = _TOOL_NAME.findall(criterion)
    if called is None or not named:
        return None
    if negated:
        return not any(n in called for n in named)
    if len(named) >= 2 and re.search(r"\b(before|then|followed by)\b", criterion):
        first, second = named[0], named[1]
        if re.search(r"\bafter\b", criterion) and not re.search(r"\bbefore\b", criterion):
            first, second = second, first
        return first in called and second in called and called.index(first) < called.index(second)
    return all(n in called for n in named)


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
