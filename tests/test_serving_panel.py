"""The token-serving panel: redraws in place, says what a change did, keeps the last picture when the library
refuses a setting, and says OVERLOADED when the queue grows without bound."""

from __future__ import annotations

import re

from workbench.ui.panels.compare import NOISE
from workbench.ui.panels.serving import ServingPanel


def test_changes_redraw_in_place_and_say_what_changed():
    p = ServingPanel()
    fig, lines = p.fig, list(p.axes[0].get_lines())
    assert "first run" in p.full_text(p.result)
    p.ctrl["chunked"].value = True
    assert p.fig is fig and list(p.axes[0].get_lines()) == lines  # the same artists, moved
    # a budget that holds every prompt: decodes ride in the prefill's iteration instead of waiting for it, so ITL
    # p99 and TPOT p99 fall (1.50 -> 1.11 ms, 1.04 -> 0.99 ms) and TTFT p99 stays within noise (17.43 -> 17.49 ms)
    before, after = p.previous["summary"], p.result["summary"]
    assert after["itl_s"]["p99"] < 0.8 * before["itl_s"]["p99"] and after["tpot_s"]["p99"] < before["tpot_s"]["p99"]
    assert abs(after["ttft_s"]["p99"] / before["ttft_s"]["p99"] - 1) < NOISE
    assert p.change_line.startswith("what changed: TPOT p99 ") and "TTFT" not in p.change_line  # TTFT, TPOT, ITL
    assert re.search(r"TPOT p99 \d+ % lower .*; ITL p99 \d+ % lower", p.change_line), p.change_line
    assert p.change_line in p.full_text(p.result)
    assert len(p.kv_prev.get_xdata()) > 0  # the previous setting is drawn


def test_a_refused_setting_keeps_the_picture_and_names_the_key():
    p = ServingPanel()
    image = p.image.value
    p.ctrl["budget"].value = 1024  # whole prompts of up to 6,000 tokens cannot fit a 1,024-token iteration
    assert "refused: serving.max_num_batched_tokens = 1024" in p.summary.value
    assert p.image.value == image


def test_overload_is_said_and_a_cache_that_never_fills_is_explained():
    p = ServingPanel()
    p.ctrl["blocks"].value = 4000  # the cache never fills at this load: nothing changes, and the panel says why
    assert "no effect: the cache was never full" in p.full_text(p.result)
    p.ctrl["load"].value = 8.0
    assert "OVERLOADED" in p.full_text(p.result)
