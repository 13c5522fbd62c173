"""Write the writers' briefs from the drills themselves, so their evidence and ground truth never go stale.

Each drill's EVIDENCE is the table ``workbench drill show`` prints (``practice.prepare``: the
baseline and regressed runs at the drill's seed) and its GROUND TRUTH is the strong reference
answer rendered from the same runs. Run after any change that moves a drill's figures:

    python tests/grader_labels/brief/make_briefs.py            # BRIEF.md (plan drills), TOKEN_BRIEF.md (serving)
    python tests/grader_labels/brief/make_briefs.py OUT.md id1 id2 ...   # a brief of chosen drills
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.grading.drills import load_drills
from workbench.grading.practice import prepare

HERE = Path(__file__).resolve().parent
PLAN_HEAD = ("# Brief: {n} interview drills on AI-accelerator compiler/runtime mapping\n\n"
             "Each drill below gives the interview PROMPT a candidate sees, the EVIDENCE the candidate is shown "
             "(figures from a simulator run of the healthy 'baseline' and the 'regressed' configuration), and the "
             "GROUND TRUTH: what actually happened (mechanism), the right proving artifact, a good fix, plausible "
             "owners and a rollback. The ground truth is for you, the writer, to know what is correct; candidates "
             "state it in their own words, often partially, sometimes wrongly. Where a figure in the ground truth "
             "differs from the EVIDENCE block, the EVIDENCE block is right (candidates see only it and the prompt); "
             "candidates quote evidence figures, round them, misremember them, or give none. NEVER copy sentences "
             "or distinctive phrases from the ground truth into answers: paraphrase, reorder, use different "
             "vocabulary, as different real people would.\n")
TOKEN_HEAD = ("# Brief: {n} interview drills on token-level LLM serving ({what})\n\n"
              "Each drill below gives the interview PROMPT a candidate sees, the EVIDENCE the candidate is shown "
              "(figures from a simulator run of the healthy 'baseline' and the 'regressed' configuration), and the "
              "GROUND TRUTH: a strong reference answer, for you, the writer, to know what is correct; candidates "
              "state it in their own words, often partially, sometimes wrongly. Candidates see only the prompt and "
              "the evidence; they quote evidence figures, round them, misremember them, or give none. NEVER copy "
              "sentences or distinctive phrases from the ground truth into answers: paraphrase, reorder, use "
              "different vocabulary, as different real people would.\n")


def _words(n: int) -> str:
    return ("one two three four five six seven eight nine ten eleven twelve".split() + [str(n)])[min(n, 13) - 1]


def section(k: int, drill) -> str:
    """One drill's part of a brief."""
    ev = prepare(drill)
    wrong = ", ".join(drill.rubric.rejected_mechanisms[:11])
    return (f"\n\n---\n\n## Drill {k}: `{drill.id}`\n\n**Title:** {drill.title}\n\n**PROMPT:** {drill.prompt}\n\n"
            f"**Senior reviewer's follow-up:** {drill.senior_review_question}\n\n"
            f"**EVIDENCE shown to the candidate:**\n```\n{ev.table}\n```\n\n"
            f"**GROUND TRUTH (do not copy wording):**\n{ev.reference.strip()}\n\n"
            f"**Wrong directions a weak candidate might take:** {wrong}; generic tuning; blaming noise; reading "
            "only averages.\n")


def brief(head: str, drills: list) -> str:
    return head + "".join(section(k, d) for k, d in enumerate(drills, 1))


def main(argv: list[str]) -> None:
    drills = load_drills()
    if argv:
        out, ids = Path(argv[0]), argv[1:]
        chosen = [drills[i] for i in ids]
        serving = all(d.topic == "serving" for d in chosen)
        head = (TOKEN_HEAD.format(n=_words(len(chosen)), what="continuous batching, paged KV cache") if serving
                else PLAN_HEAD.format(n=_words(len(chosen))))
        out.write_text(brief(head, chosen))
        return
    token = [d for _, d in sorted(drills.items()) if d.topic == "serving" and d.id in TOKEN_DRILLS]
    plan = [d for _, d in sorted(drills.items()) if d.topic != "serving"]
    (HERE / "BRIEF.md").write_text(brief(PLAN_HEAD.format(n=_words(len(plan))), plan))
    (HERE / "TOKEN_BRIEF.md").write_text(brief(TOKEN_HEAD.format(
        n=_words(len(token)), what="continuous batching, paged KV cache"), token))


TOKEN_DRILLS = ("chunked-prefill-ttft", "kv-preemption-storm", "priority-budget-starvation")

if __name__ == "__main__":
    main(sys.argv[1:])
