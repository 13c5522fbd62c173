"""What a drill is once loaded: :class:`Drill`, its :class:`DrillScenario` and its :class:`Rubric`.

Read from TOML and checked by :mod:`workbench.grading.drills` (and :mod:`workbench.grading.drill_check`);
read by the grader, practice and the interview.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rubric:
    """The drill-specific vocabulary the grader checks substance against."""

    workload_terms: tuple[str, ...]
    mechanism_chain: tuple[tuple[str, ...], ...]  # ordered steps, each a set of accepted phrasings
    mechanism_required: tuple[int, ...]  # steps that must be present
    mechanism_min_steps: int
    rejected_mechanisms: tuple[str, ...]
    artifact_terms: tuple[str, ...]
    fix_terms: tuple[str, ...]
    mechanism_plain: tuple[tuple[str, ...], ...] = ()  # per step: plain-language phrasings beside the jargon
    fix_plain: tuple[str, ...] = ()  # the fix in plain language, beside the jargon of fix_terms
    revert_terms: tuple[str, ...] = ()  # the change that caused the regression, where undoing it is the fix
    rejected_fixes: tuple[str, ...] = ()  # fixes of a neighbouring mechanism, not this one (beside rejected_mechanisms)
    fix_knobs: tuple[str, ...] = ()  # settings of degree ('max_delay'): turned with no value, no bounded fix
    step_names: tuple[str, ...] = ()  # per step: a short name, for feedback
    step_questions: tuple[str, ...] = ()  # per step: the question that draws it out
    # drills whose chains are one class (a shape-envelope fallback, strict priority ...) share a name here: an answer
    # to one is a fair answer to the other; an answer that earns only another class's chain answers another incident
    mechanism_class: str = ""
    # the change in words the prompt does not use ('shape drift'): a cause made only of them restates the change
    change_terms: tuple[str, ...] = ()
    own_phrases: int = 0  # phrases the drill file writes itself (its concept references left out)
    concepts: tuple[str, ...] = ()  # the concepts it names, in the order it names them


@dataclass(frozen=True)
class DrillScenario:
    """The workload slice that reproduces the drill's regression."""

    name: str  # a built-in scenario or a path relative to the drill file
    requests: int
    baseline: dict  # dotted path -> value: the healthy run
    regressed: dict  # dotted path -> value: the regressed run
    fixed: dict  # dotted path -> value, on top of regressed: the proposed fix at the same seed ({} if none)
    metric: str  # summary path of the primary metric, e.g. latency_s.p99


@dataclass(frozen=True)
class Drill:
    """One interview drill."""

    id: str
    title: str
    topic: str
    prompt: str
    senior_review_question: str
    scenario: DrillScenario
    rubric: Rubric
    strong_answer: str
    weak_answer: str
    debug_branches: tuple[str, ...]
    pitfalls: tuple[str, ...]
    takeaways: tuple[str, ...]
    path: str
