"""Predict, commit, then observe: what a prediction is, how one is checked, and how far off it was.

The widget (:mod:`workbench.ui.widgets.prediction`) is a thin face over this module. A question has one
of three kinds: a :class:`Number` with its unit, a :class:`Choice` among options, or a
:class:`Ranking` of items. :func:`parse` turns what the learner entered into a prediction
(or says why it cannot), and :func:`compare` sets a committed prediction beside the
observed value: how far off it was, in the question's own terms (a factor and a
difference for numbers, right or wrong for choices, pairs out of order for rankings).
Nothing here touches widgets or the store.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

NOT_COMMITTED = "not committed"


@dataclass(frozen=True, slots=True)
class Number:
    """A number in ``unit`` (``"ms"``, ``"x"``, ``"%"``, ``"MB"``...)."""

    unit: str
    tolerance: float = 0.1  # relative: within 10% of the observed value reads as "close"

    name = "number"


@dataclass(frozen=True, slots=True)
class Choice:
    """One of ``options``."""

    options: tuple[str, ...]

    name = "choice"


@dataclass(frozen=True, slots=True)
class Ranking:
    """``items`` in an order; ``order`` says what comes first (``"lowest p99 first"``)."""

    items: tuple[str, ...]
    order: str = "first to last"

    name = "ranking"


Kind = Number | Choice | Ranking


@dataclass(frozen=True, slots=True)
class Question:
    """One prediction prompt: ``id`` (``"02.1"``, the key in the store), the question, and its kind."""

    id: str
    text: str
    kind: Kind


@dataclass(frozen=True, slots=True)
class Comparison:
    """A committed prediction beside the observed value."""

    predicted: Any
    observed: Any
    close: bool  # right, within tolerance, or in the exact order
    how_far: str  # one phrase: "off by +0.34 ms (1.5x the observed)", "right", "1 of 3 pairs out of order"


def kind_of(unit: str | None = None, choices: tuple[str, ...] | list[str] | None = None,
            rank: tuple[str, ...] | list[str] | None = None, order: str = "first to last",
            tolerance: float = 0.1) -> Kind:
    """The kind a question's arguments name: exactly one of ``unit``, ``choices`` or ``rank``."""
    given = [x is not None for x in (unit, choices, rank)]
    if sum(given) != 1:
        raise ValueError("give exactly one of unit= (a number), choices= (a choice) or rank= (a ranking)")
    if unit is not None:
        if not 0 < tolerance < 1:
            raise ValueError(f"tolerance is a relative error in (0, 1), not {tolerance}")
        return Number(unit, tolerance)
    items = tuple(str(x) for x in (choices if choices is not None else rank))
    if len(items) < 2 or len(set(items)) != len(items):
        raise ValueError(f"give at least two distinct options, not {items}")
    return Choice(items) if choices is not None else Ranking(items, order)


def parse(kind: Kind, raw: Any) -> Any:
    """The prediction ``raw`` stands for, in the form the store keeps; ``ValueError`` says what is wrong.

    A number may be typed as text (``"1,500"``, ``"2.5 ms"`` with the question's unit); a choice
    is one of the options; a ranking lists every item once, as a sequence or as ``"a > b > c"``.
    """
    if isinstance(kind, Number):
        if isinstance(raw, str):
            text = raw.strip().removesuffix(kind.unit).strip().replace(",", "").replace("_", "")
            if not text:
                raise ValueError(f"type a number (in {kind.unit})")
            try:
                raw = float(text)
            except ValueError:
                raise ValueError(f"{raw!r} is not a number (in {kind.unit})") from None
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise ValueError(f"type a finite number (in {kind.unit})")
        return float(raw)
    if isinstance(kind, Choice):
        if raw not in kind.options:
            raise ValueError(f"choose one of {', '.join(kind.options)}")
        return raw
    items = [s.strip() for s in raw.split(">")] if isinstance(raw, str) else list(raw or ())
    if sorted(map(str, items)) != sorted(kind.items) or len(items) != len(kind.items):
        raise ValueError(f"rank every one of {', '.join(kind.items)} once ({kind.order})")
    return [str(x) for x in items]


def discordant_pairs(predicted: list[str], observed: list[str]) -> int:
    """Pairs of items the two orders disagree on (the Kendall tau distance)."""
    at = {item: i for i, item in enumerate(observed)}
    ranks = [at[item] for item in predicted]
    return sum(ranks[i] > ranks[j] for i in range(len(ranks)) for j in range(i + 1, len(ranks)))


def format_value(kind: Kind, value: Any) -> str:
    """A prediction or an observation as the learner reads it: ``"2.5 ms"``, ``"p99"``, ``"a > b > c"``."""
    if isinstance(kind, Number):
        unit = kind.unit
        return f"{value:.3g}{unit}" if unit in ("x", "%") else f"{value:.3g} {unit}".rstrip()
    if isinstance(kind, Ranking):
        return " > ".join(value)
    return str(value)


def compare(kind: Kind, predicted: Any, observed: Any) -> Comparison:
    """How far the committed ``predicted`` is from ``observed`` (both already parsed)."""
    if isinstance(kind, Number):
        diff = predicted - observed
        if observed == 0:
            close = abs(diff) < 1e-12
            return Comparison(predicted, observed, close, "exact" if close else
                              f"off by {diff:+.3g} {kind.unit}".rstrip())
        rel = abs(diff) / abs(observed)
        close = rel <= kind.tolerance
        factor = predicted / observed
        if rel < 1e-9:
            return Comparison(predicted, observed, True, "exact")
        where = "within" if close else "outside"
        shown = f"{diff:+.3g}{kind.unit}" if kind.unit in ("x", "%") else f"{diff:+.3g} {kind.unit}".rstrip()
        return Comparison(predicted, observed, close,
                          f"off by {shown} ({factor:.2g} times the observed; {rel:.0%} error, {where} "
                          f"{kind.tolerance:.0%})")
    if isinstance(kind, Choice):
        close = predicted == observed
        return Comparison(predicted, observed, close, "right" if close else "wrong")
    n = len(kind.items)
    d = discordant_pairs(predicted, observed)
    if d == 0:
        return Comparison(predicted, observed, True, "exact order")
    in_place = sum(p == o for p, o in zip(predicted, observed, strict=True))
    return Comparison(predicted, observed, False,
                      f"{d} of {n * (n - 1) // 2} pairs out of order; {in_place} of {n} in the right place")
