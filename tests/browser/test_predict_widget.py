"""A learner predicts in JupyterLab: Run All shows the widget "not committed" and no answer in it; the learner
picks a prediction and commits; the widget then sets the observed value beside it with how far off and why, and
the commit is in the progress store (the ``lab`` fixture's ``$WORKBENCH_DB``); the experiment cell below it, held
until the commit, then shows its output.

Same harness as ``test_jupyterlab.py`` (its fixtures and helpers). Screenshots before and after the commit go
to ``/tmp/predict-shots/`` (for the issue) and to ``test-artifacts/browser/``.
"""

from __future__ import annotations

from pathlib import Path

from test_jupyterlab import ARTIFACTS, cell_errors, nb, open_and_run

from workbench.grading.store import Store

SHOTS = Path("/tmp/predict-shots")
CHAPTER = "00_tour"  # its first prediction: 00.1, a choice; the experiment below it observes "p99"


def _stored(lab, prompt: str) -> list:
    """The rows the ``lab`` fixture's progress store holds for ``prompt``, oldest first."""
    return Store(lab["root"].parent / "progress.sqlite3", create=False).predictions(prompt)


def _shoot(page, widget, name: str) -> None:
    for folder in (SHOTS, ARTIFACTS):
        folder.mkdir(parents=True, exist_ok=True)
        widget.screenshot(path=str(folder / f"{name}.png"))
        page.screenshot(path=str(folder / f"{name}_page.png"))


def test_a_learner_commits_a_prediction_and_sees_it_beside_the_observation(browser, lab):
    ctx, page = open_and_run(browser, lab, CHAPTER)
    try:
        assert cell_errors(page, CHAPTER) == [], f"{CHAPTER}: cells raised"
        widgets = page.locator(".jp-Notebook .workbench-predict")
        assert widgets.count() == 3, f"{CHAPTER}: expected its three prediction widgets"
        widget = widgets.first
        widget.scroll_into_view_if_needed()
        # Run All ran the experiment below, which registered the observation: the widget still shows none of it
        before = widget.inner_text()
        assert "not committed" in before and "observed" not in before and "Why:" not in before, before
        assert widget.locator(".workbench-predict-reveal").count() == 0
        # the experiment cell below is held: a note, its printed table hidden (Prediction.held)
        held = page.locator(".jp-Notebook .workbench-held").first
        assert "held until you commit prediction 00.1" in held.inner_text()
        assert "hit rate" not in held.inner_text() and not held.locator(".jp-OutputArea-output").first.is_visible()
        _shoot(page, widget, "predict_before_commit")

        widget.locator("label", has_text="p50").locator("input").check()
        widget.get_by_role("button", name="Commit").click()
        page.wait_for_selector(".jp-Notebook .workbench-predict .workbench-predict-reveal", timeout=30_000)
        after = widget.inner_text()
        for seen in ("you predicted", "p50", "observed", "p99", "how far off", "wrong", "Why:"):
            assert seen in after, f"the reveal lacks {seen!r}:\n{after}"
        assert widget.get_by_role("button", name="Committed").is_disabled()
        _shoot(page, widget, "predict_after_commit")
        page.wait_for_function("() => document.querySelector('.jp-Notebook .workbench-held').innerText"
                               ".includes('hit rate')", timeout=30_000)
        assert "Prediction 00.1 committed: the result" in held.inner_text()
        held.scroll_into_view_if_needed()
        _shoot(page, held, "held_after_commit")

        # stored before the reveal, in the store drills use
        rows = _stored(lab, "00.1")  # the last row: test_jupyterlab's learner may have committed this prompt before
        assert rows and (rows[-1]["kind"], rows[-1]["prediction"]) == ("choice", "p50"), rows
        # the other widgets of the chapter still wait
        assert all("not committed" in widgets.nth(k).inner_text() for k in (1, 2))
        assert page.evaluate(f"() => !!{nb(CHAPTER)}")
    finally:
        ctx.close()
        lab["shutdown_kernels"]()


def test_a_number_with_its_unit_is_committed_and_shown_with_how_far_off(browser, lab):
    name = "01_shape_envelopes"  # 01.2: by what factor p99 grows from median 200 to 210 (about 2.1x)
    ctx, page = open_and_run(browser, lab, name)
    try:
        assert cell_errors(page, name) == [], f"{name}: cells raised"
        widget = page.locator(".jp-Notebook .workbench-predict").nth(1)
        widget.scroll_into_view_if_needed()
        assert "01.2" in widget.inner_text() and "not committed" in widget.inner_text()
        widget.locator("input[type=text]").fill("oops")
        widget.get_by_role("button", name="Commit").click()
        page.wait_for_function("() => document.querySelectorAll('.jp-Notebook .workbench-predict')[1]"
                               ".innerText.includes('is not a number')", timeout=30_000)
        widget.locator("input[type=text]").fill("1.5")
        _shoot(page, widget, "predict_number_before_commit")
        widget.get_by_role("button", name="Commit").click()
        page.wait_for_selector(".jp-Notebook .workbench-predict .workbench-predict-reveal", timeout=30_000)
        after = widget.inner_text()
        for seen in ("1.5x", "observed", "2.08x", "off by -0.575x", "28% error", "Why:"):
            assert seen in after, f"the reveal lacks {seen!r}:\n{after}"
        _shoot(page, widget, "predict_number_after_commit")
        rows = _stored(lab, "01.2")
        assert rows and (rows[-1]["kind"], rows[-1]["prediction"]) == ("number", 1.5), rows
    finally:
        ctx.close()
        lab["shutdown_kernels"]()
