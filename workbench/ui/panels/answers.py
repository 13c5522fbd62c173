"""Answers for the predictions a panel asks for ("Predict, then try"), run only when the learner commits.

A panel prompt asks what a change of the panel's controls will do. Its ``predict(..., answer=...)``
passes one of these, wrapped in a ``lambda``, so the two runs happen at the commit and not
before: nothing of the answer is computed while the notebook runs top to bottom. Each returns
``(observed value, why)`` as :meth:`~workbench.ui.widgets.prediction.Prediction.commit` expects;
the runs are the panel's own model (``panel.run``) at its current settings with the changes
given, its widgets untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _summary(panel, changes: dict[str, Any]) -> dict:
    return panel.run(**{**panel.values(), **changes})["summary"]


def _read(summary: dict, path: str) -> Any:
    """``summary["a"]["b"]`` for ``path`` ``"a.b"``."""
    for key in path.split("."):
        summary = summary[key]
    return summary


def _setting(changes: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in changes.items())


def moved_most(panel, path: str, keys: Sequence[str], before: dict[str, Any], after: dict[str, Any],
               because: str) -> tuple[str, str]:
    """Which of ``keys`` (under ``path`` in the run summary, e.g. percentiles under ``"latency_s"``) grows most,
    relative to where it started, from the ``before`` to the ``after`` setting; ``because`` opens the why."""
    a, b = _read(_summary(panel, before), path), _read(_summary(panel, after), path)
    factor = {k: b[k] / a[k] for k in keys}
    shown = ", ".join(f"{k} x{v:.2f}" for k, v in factor.items())
    return max(factor, key=factor.get), f"{because} ({_setting(before)} -> {_setting(after)}: {shown})."


def direction(panel, path: str, before: dict[str, Any], after: dict[str, Any], because: str,
              flat: float = 0.05, unit_scale: float = 1e3, unit: str = "ms") -> tuple[str, str]:
    """``"up"``, ``"down"`` or ``"about the same"`` (within ``flat``, relative): where the number at ``path``
    (``"ttft_s.p99"``) goes from the ``before`` to the ``after`` setting."""
    a, b = _read(_summary(panel, before), path), _read(_summary(panel, after), path)
    way = "about the same" if abs(b - a) <= flat * abs(a) else "up" if b > a else "down"
    return way, (f"{because} ({path} {a * unit_scale:.2f} -> {b * unit_scale:.2f} {unit} from {_setting(before)} to "
                 f"{_setting(after)}).")
