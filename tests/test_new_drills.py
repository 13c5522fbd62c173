"""The two drills written from the concept lexicon (issue 36): their runs show their mechanisms, their references
grade strong, their rubrics stay small, and the claim rules hold on them (answers written for these tests)."""

from __future__ import annotations

import pytest

from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.grading.practice import prepare

D = load_drills()
NEW = ("spec-decode-acceptance", "tp-allreduce-slow-link")
EV = {d: prepare(D[d]) for d in NEW}


@pytest.mark.parametrize("drill", NEW)
def test_each_is_written_in_about_forty_phrases_of_its_own(drill):
    r = D[drill].rubric
    assert r.own_phrases <= 40 and len(r.concepts) >= 6
    assert sum(len(s) for s in r.mechanism_chain) > 4 * r.own_phrases  # the concepts carry the vocabulary


def test_speculation_pays_until_the_target_stops_accepting_the_draft():
    s = EV["spec-decode-acceptance"].summaries
    base, reg, fix = (s[k]["speculative"] for k in ("base", "reg", "fix"))
    assert base["tenants"]["code"]["acceptance_per_token"] == pytest.approx(0.8, abs=0.01)
    assert reg["tenants"]["code"]["acceptance_per_token"] == pytest.approx(0.3, abs=0.01)
    assert base["tokens_per_step"] == pytest.approx((1 - 0.8 ** 5) / 0.2, rel=0.01)  # the closed form, k = 4
    assert reg["tokens_per_step"] < 0.6 * base["tokens_per_step"]
    tpot = {k: s[k]["tpot_s"]["p99"] for k in ("base", "reg", "fix")}
    assert tpot["reg"] > 4 * tpot["base"] and tpot["base"] < tpot["fix"] < 0.7 * tpot["reg"]  # the guard: most of it
    assert fix["stopped"] > 0


def test_the_ring_on_a_slow_link_owns_the_iteration_and_replicas_beat_it():
    s = EV["tp-allreduce-slow-link"].summaries
    share = {k: s[k]["comm_share"] for k in ("base", "reg", "fix")}
    assert share["base"] < 0.3 < 0.6 < share["reg"] and share["fix"] == 0.0  # TP = 1 has no all-reduce
    ttft = {k: s[k]["ttft_s"]["p99"] for k in ("base", "reg", "fix")}
    assert ttft["base"] < ttft["fix"] < ttft["reg"] / 2
    assert s["reg"]["tokens_per_s"] == pytest.approx(s["base"]["tokens_per_s"], rel=0.05)  # stable: throughput holds
    assert not s["reg"]["load"]["overloaded"]


@pytest.mark.parametrize("drill", NEW)
def test_the_reference_pasted_back_and_the_weak_one_earn_nothing(drill):
    assert grade(D[drill], EV[drill].reference).verdict == "weak"  # rendered, its figures in: still a paste
    assert grade(D[drill], D[drill].weak_answer).verdict == "weak"


STRONG = {
    "spec-decode-acceptance": (
        "TPOT p99 went from about 7 ms to 34 ms after the code traffic changed. The draft model was trained on "
        "chat, so on the templating language the target rejects most of its guesses: acceptance per draft token "
        "fell from 0.8 to 0.3, and a decode step now yields about 1.7 tokens instead of 3.4. Each step still pays "
        "for the draft's four passes and for verifying five positions per sequence, so every output token costs "
        "more chip time and the batch grows. I'd prove it with acceptance and TPOT per tenant at the same seed, "
        "against a run with speculation off. Fix: set min_acceptance to 0.5 so sequences that keep missing stop "
        "speculating. The serving runtime team owns that setting; if the canary's TPOT p99 stays above the "
        "no-speculation run, turn speculation off."),
    "tp-allreduce-slow-link": (
        "After the reboot TTFT p99 went from 61 to 466 ms and ITL p99 from 14 to 98 ms. The model is split over "
        "the four GPUs, so every layer all-reduces its partial sums twice and no GPU moves on until the ring "
        "finishes. The ring now runs over PCIe instead of NVLink, about 20 GB/s against 370, so all-reduces went "
        "from 20% to 67% of device time, and since their bytes grow with the tokens in an iteration, the big "
        "prefill chunks suffer most. To prove it, split each iteration into compute and all-reduce at the same "
        "seed and run all_reduce_perf on this node against a healthy one. Drain the node until NVLink is back; "
        "the GPU fleet on-call owns it, and if bus bandwidth is not back near NVLink's, it stays out of the pool."),
}


@pytest.mark.parametrize("drill", NEW)
def test_an_answer_in_its_own_words_is_strong(drill):
    g = grade(D[drill], STRONG[drill])
    assert g.verdict == "strong", g.to_json()


def test_an_analogy_mapped_onto_the_case_earns_the_mechanism():
    text = ("Think of a guessing game: an intern (the draft model) guesses the next four words and the editor (the "
            "target model) checks them all in one pass, keeping the words up to the first wrong one. On chat the "
            "intern is right 80% of the time; on the new templating language the intern is mostly wrong, so the "
            "editor rejects most guesses, yet every round still pays for the intern's four guesses and the editor's "
            "check of five positions. Each round now yields barely more than one token, so time per output token "
            "rose above what it was before speculation.")
    assert grade(D["spec-decode-acceptance"], text).elements["mechanism"].present


@pytest.mark.parametrize("drill", NEW)
def test_its_vocabulary_as_soup_or_a_tautology_earns_nothing(drill):
    soup = {"spec-decode-acceptance": "speculative decoding draft model 4 draft tokens acceptance rate 0.3 code tenant "
                                      "tokens per step verify k+1 tpot p99 same seed owner serving runtime canary "
                                      "min_acceptance rollback speculation off",
            "tp-allreduce-slow-link": "tensor parallel tp=4 all-reduce nccl ring pcie nvlink 20 gb/s comm share 67% "
                                      "ttft p99 itl p99 same seed all_reduce_perf owner fleet on-call drain node "
                                      "rollback canary"}[drill]
    g = grade(D[drill], soup)
    assert g.verdict == "weak" and not g.elements["mechanism"].present
    taut = {"spec-decode-acceptance": "TPOT p99 rose because of speculative decoding. The code tenant got slower "
                                      "because its traffic shifted.",
            "tp-allreduce-slow-link": "TTFT p99 rose because of the reboot. ITL rose because of the new driver."}[drill]
    assert not grade(D[drill], taut).elements["mechanism"].present
