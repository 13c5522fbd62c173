"""Speculative decoding (``[serving.speculative]``): closed forms of the acceptance draws, one sequence's draft and
verify costs by hand, ``tokens = 0`` as the run without the section bit for bit, KV lookahead under preemption,
the guard, streamed-chunk ITL, the keys refused by name, and the built-in scenario's four runs.

Closed forms: with ``k`` drafts each accepted with probability ``a`` up to the first rejection, the accepted count
has mean ``a + a^2 + ... + a^k = (1 - a^(k+1)) / (1 - a) - 1`` and a step emits one token more (Leviathan, Kalman
and Matias, "Fast Inference from Transformers via Speculative Decoding", ICML 2023, eq. 1).
"""

from __future__ import annotations

import dataclasses
import tomllib

import numpy as np
import pytest

from workbench.errors import ConfigError
from workbench.hardware import PRESETS
from workbench.scenario import load_scenario, parse_scenario
from workbench.serving.config import Decoder, KVConfig, LengthLaw, SchedulerConfig, Speculative, Tenant
from workbench.serving.cost import IterationCost, causal_keys
from workbench.serving.engine import simulate_tokens
from workbench.serving.metrics import itl_s, summarize_tokens, tpot_s
from workbench.serving.report import format_token_summary
from workbench.serving.run import ServingRun, auto_blocks, check_run
from workbench.serving.speculative import acceptance_rng, expected_accepted, leading_successes

TARGET = Decoder(layers=4, d_model=1024, heads=16, d_ff=4096, kv_heads=4, gated_mlp=True, vocab=32000)
DRAFT = Decoder(layers=2, d_model=256, heads=4, d_ff=1024, gated_mlp=True, vocab=32000)
H100 = PRESETS["h100-sxm"]


def differences(a, b) -> list[str]:
    """Names of the trace fields that differ (values, shapes or dtypes)."""
    out = []
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y, equal_nan=True):
                out.append(f.name)
        elif f.name != "run" and not dataclasses.is_dataclass(x) and x != y:
            out.append(f.name)
    return out


def spec_run(k: int = 4, acceptance: tuple[float, ...] = (0.8,), n: int = 300, rate: float = 30.0,
             guard: float = 0.0, **kw) -> ServingRun:
    tenants = tuple(Tenant(f"t{j}", rate, LengthLaw(200, 0.6, 1000), LengthLaw(120, 0.6, 500), acceptance=a)
                    for j, a in enumerate(acceptance))
    kw = {"scheduler": SchedulerConfig(2048, 64, chunked_prefill=True), "kv": KVConfig(blocks=4096)} | kw
    return ServingRun(tenants, requests=n, seed=7, model=TARGET, hardware=H100,
                      speculative=Speculative(tokens=k, draft=DRAFT, min_acceptance=guard), **kw)


@pytest.mark.parametrize("a, k", [(0.3, 4), (0.8, 4), (0.6, 1), (0.9, 7)])
def test_mean_accepted_tokens_meets_the_closed_form(a, k):
    draws = leading_successes(np.random.default_rng(11).random((200_000, k)), np.full(200_000, a))
    want = (1 - a ** (k + 1)) / (1 - a) - 1
    assert expected_accepted(a, k) == pytest.approx(want, rel=1e-12)
    assert draws.mean() == pytest.approx(want, abs=5 * draws.std() / np.sqrt(len(draws)))
    assert draws.min() >= 0 and draws.max() <= k


def test_with_acceptance_one_every_step_emits_k_plus_one():
    k = 3
    tr = simulate_tokens(spec_run(k, (1.0,)))
    assert np.array_equal(tr.spec_accepted, tr.spec_proposed) and tr.spec_proposed.sum() > 0
    for i, out in enumerate(tr.requests.output):
        ts = tr.token_s[tr.token_offset[i]:tr.token_offset[i + 1]]
        _, chunks = np.unique(ts, return_counts=True)
        # the prefill's token first, then k + 1 a step, the last step capped by what the request had left
        assert chunks[0] == 1 and (chunks[1:-1] == k + 1).all() and 1 <= chunks[-1] <= k + 1 or out == 1
    steps = tr.it_spec > 0
    assert (tr.it_decode_tokens[steps] <= (k + 1) * tr.it_decodes[steps]).all()
    s = summarize_tokens(tr)["speculative"]
    assert s["acceptance_rate"] == 1.0 and k + 0.8 < s["tokens_per_step"] <= k + 1


def test_one_sequence_alone_pays_the_draft_steps_and_the_verify_by_hand():
    k, prompt, out = 2, 100, 9
    tenants = (Tenant("t", 0.01, LengthLaw(prompt, 0.0, prompt), LengthLaw(out, 0.0, out), acceptance=1.0),)
    run = ServingRun(tenants, requests=1, model=TARGET, hardware=H100, kv=KVConfig(blocks=64),
                     speculative=Speculative(tokens=k, draft=DRAFT))
    tr = simulate_tokens(run)
    target, draft = IterationCost.of_run(run), IterationCost.of(DRAFT, H100)
    t = tr.requests.arrival_s[0] + target.prefill_seconds(prompt)
    expected, c = [t], prompt  # the prefill's token; then c tokens cached, the last emitted one not yet
    while len(expected) < out:
        d = 0.0
        for j in range(k):  # k draft decode steps, one after another, one sequence
            d += draft.seconds(1, float(c + j + 1), float(c + j), seqs=1)
        verify = target.seconds(k + 1, causal_keys(c, k + 1), float(c), seqs=k + 1)  # k + 1 positions, k + 1 logits
        t = t + d + verify
        emitted = min(k + 1, out - len(expected))
        expected += [t] * emitted
        c += emitted
    assert np.array_equal(tr.token_s, np.array(expected))  # bit for bit: the same additions in the same order
    assert tr.it_draft_s[1] == pytest.approx(sum(draft.seconds(1, float(prompt + j + 1), float(prompt + j), seqs=1)
                                                 for j in range(k)), rel=1e-12)
    assert list(tr.it_decode_tokens[1:]) == [3, 3, 2] and list(tr.it_spec[1:]) == [1, 1, 1]


def test_tokens_zero_is_the_run_without_the_section_bit_for_bit():
    plain = ServingRun(spec_run().tenants, requests=300, seed=7, model=TARGET, hardware=H100,
                       scheduler=SchedulerConfig(2048, 64, chunked_prefill=True), kv=KVConfig(blocks=4096))
    off = spec_run(k=0, acceptance=(0.3,), guard=0.9)
    a, b = simulate_tokens(plain, loop="python"), simulate_tokens(off, loop="python")
    assert differences(a, b) == [] and "speculative" not in summarize_tokens(b)
    assert simulate_tokens(off).token_s.tobytes() == a.token_s.tobytes()  # auto may take the compiled loop


def test_same_seed_same_run_and_the_draws_follow_the_seed():
    a, b = simulate_tokens(spec_run(n=150)), simulate_tokens(spec_run(n=150))
    assert differences(a, b) == []
    c = simulate_tokens(dataclasses.replace(spec_run(n=150), seed=8))
    assert not np.array_equal(a.spec_accepted, c.spec_accepted)
    assert acceptance_rng(7).random() == acceptance_rng(7).random() != acceptance_rng(8).random()


def test_speculation_lowers_tpot_and_each_chunk_is_one_iteration():
    base, spec = simulate_tokens(spec_run(0, n=200, rate=5.0)), simulate_tokens(spec_run(4, n=200, rate=5.0))
    assert np.nanmean(tpot_s(spec)) < 0.9 * np.nanmean(tpot_s(base))  # a small target: fixed times weigh
    gaps = itl_s(spec)
    assert (gaps > 0).all()  # tokens emitted together are one streamed chunk: no zero gaps
    chunks = sum(len(np.unique(spec.token_s[spec.token_offset[i]:spec.token_offset[i + 1]])) - 1
                 for i in range(len(spec.requests.output)))
    assert len(gaps) == chunks < int(spec.requests.output.sum() - len(spec.requests.output))
    # without speculation every token is its own chunk: every gap counts, as before
    assert len(itl_s(base)) == int(base.requests.output.sum() - len(base.requests.output))


@pytest.mark.parametrize("preemption", ["recompute", "swap"])
def test_kv_lookahead_under_preemption_every_token_once(preemption):
    run = spec_run(4, (0.7,), n=150, rate=200.0, kv=KVConfig(blocks=120, preemption=preemption))
    tr = simulate_tokens(run)
    assert tr.preemptions.sum() > 0 and not np.isnan(tr.token_s).any()  # every token emitted (once: asserted inside)
    assert (tr.it_blocks_used <= run.kv.blocks).all() and tr.spec_proposed.sum() > 0
    for i in range(len(tr.requests.output)):  # a request's tokens never go back in time
        assert (np.diff(tr.token_s[tr.token_offset[i]:tr.token_offset[i + 1]]) >= 0).all()


def test_the_guard_stops_the_poorly_predicted_tenant():
    tr = simulate_tokens(spec_run(4, (0.9, 0.1), n=400, rate=10.0, guard=0.5))
    s = summarize_tokens(tr)["speculative"]["tenants"]
    low, high = tr.requests.tenant == 1, tr.requests.tenant == 0
    long_enough = tr.spec_proposed >= 8 * 4  # made the warmup's proposals
    assert tr.spec_stopped[low & long_enough].all() and not tr.spec_stopped[high].any()
    assert (tr.spec_proposed[low] <= 4 * 12).all()  # stopped soon after the warmup, never restarted
    assert s["t1"]["acceptance_per_token"] < 0.2 < 0.8 < s["t0"]["acceptance_per_token"]
    assert s["t1"]["stopped"] == int(tr.spec_stopped[low].sum())
    text = format_token_summary(summarize_tokens(tr))
    assert "speculative decoding, k = 4" in text and "guard (acceptance < 0.5)" in text


def test_the_draft_takes_hbm_and_its_kv_rides_in_every_block():
    plain, spec = (dataclasses.replace(r, kv=KVConfig(blocks=0)) for r in (spec_run(0), spec_run(4)))
    assert auto_blocks(spec) < auto_blocks(plain)
    tight = KVConfig(block_size=16, blocks=94, watermark=0.0)  # the longest sequence: 1,000 + 500 tokens, 94 blocks
    check_run(spec_run(0, kv=tight))
    with pytest.raises(ConfigError) as e:  # k = 12 lookahead slots past it need a 95th block
        check_run(spec_run(12, kv=tight))
    assert e.value.key == "serving.kv.blocks" and "lookahead" in e.value.why


def test_speculation_beside_tensor_parallelism():
    """The draft runs unsplit on each GPU (its weights and KV counted on every one); the target is split."""
    from workbench.serving.config import Parallel

    both = spec_run(n=120, parallel=Parallel(tensor=2))
    tr = simulate_tokens(both)
    s = summarize_tokens(tr)
    assert s["parallel"]["tensor"] == 2 and s["speculative"]["tokens"] == 4 and s["comm_share"] > 0
    assert tr.it_link_s[tr.it_spec > 0].min() > 0 and tr.it_draft_s.sum() > 0


def test_auto_runs_the_reference_loop_and_the_compiled_loops_refuse():
    run = spec_run(n=40)
    assert differences(simulate_tokens(run), simulate_tokens(run, loop="python")) == []
    for loop in ("compiled", "aot", "jit"):
        with pytest.raises(ValueError, match="speculative decoding"):
            simulate_tokens(run, loop=loop)


BASE = """seed = 2
requests = 100
[hardware]
preset = "h100-sxm"
[serving]
mode = "token"
chunked_prefill = true
[serving.kv]
blocks = 2048
[serving.model]
layers = 4
d_model = 1024
heads = 16
d_ff = 4096
vocab = 32000
[serving.speculative]
tokens = 4
[serving.speculative.draft]
layers = 2
d_model = 256
heads = 4
d_ff = 1024
vocab = 32000
[[serving.tenants]]
name = "code"
rate = 20.0
prompt = { median = 200, sigma = 0.5, max = 1000 }
output = { median = 50, sigma = 0.5, max = 300 }
acceptance = 0.8
"""


@pytest.mark.parametrize("old, new, key", [
    ("tokens = 4", "tokens = -1", "serving.speculative.tokens"),
    ("tokens = 4", "tokens = 17", "serving.speculative.tokens"),
    ("tokens = 4", "tokens = 4\nmin_acceptance = 1.5", "serving.speculative.min_acceptance"),
    ("tokens = 4", "tokens = 4\nwarmup = 0", "serving.speculative.warmup"),
    ("tokens = 4", "tokens = 4\nk = 3", "serving.speculative.k"),
    ("heads = 4\n", "heads = 3\n", "serving.speculative.draft.heads"),
    ("d_ff = 1024\nvocab = 32000", "d_ff = 1024\nvocab = 50000", "serving.speculative.draft.vocab"),
    ("d_ff = 1024\n", "d_ff = 1024\nwidth = 2\n", "serving.speculative.draft.width"),
    ("acceptance = 0.8", "acceptance = 1.2", "serving.tenants.code.acceptance"),
    ("acceptance = 0.8", 'acceptance = "high"', "serving.tenants[0].acceptance"),
    ('mode = "token"', 'mode = "token"\nbatching = "request"', "serving.speculative.tokens"),
])
def test_bad_speculative_keys_are_named(old, new, key):
    assert old in BASE
    with pytest.raises(ConfigError) as e:
        parse_scenario(tomllib.loads(BASE.replace(old, new)), "bad.toml")
    assert e.value.key == key and f"{key} = " in str(e.value)


def test_the_built_in_scenario_four_runs():
    """The four runs llm_speculative's description reports: speculation at 0.8 halves TPOT p99 (and, measured per
    streamed chunk, raises ITL: each chunk waits for a longer iteration); the code tenant at 0.3 ends worse than no
    speculation on TPOT p99 and ITL p99; the guard at 0.5 recovers most of the TPOT loss and part of the ITL loss."""
    run = load_scenario("llm_speculative").run
    shift = dataclasses.replace(run, tenants=(run.tenants[0], dataclasses.replace(run.tenants[1], acceptance=0.3)))
    runs = (dataclasses.replace(run, speculative=dataclasses.replace(run.speculative, tokens=0),
                                kv=dataclasses.replace(run.kv, blocks=0)),
            run, shift, dataclasses.replace(shift, speculative=dataclasses.replace(run.speculative,
                                                                                   min_acceptance=0.5)))
    none, good, bad, guard = (summarize_tokens(simulate_tokens(r)) for r in runs)
    for s in (none, good, bad, guard):
        assert not s["load"]["overloaded"] and s["preemptions"] == 0
    tp, itl = (lambda s: s["tpot_s"]["p99"]), (lambda s: s["itl_s"]["p99"])
    assert tp(good) < 0.6 * tp(none) and itl(good) > itl(none)
    assert tp(bad) > 2 * tp(none) and itl(bad) > 1.2 * itl(none)
    assert tp(guard) < tp(bad) - 0.6 * (tp(bad) - tp(none)) and itl(none) < itl(guard) < itl(bad)
    sp = {n: s["speculative"]["tenants"] for n, s in (("good", good), ("bad", bad), ("guard", guard))}
    assert sp["good"]["chat"]["acceptance_per_token"] == pytest.approx(0.8, abs=0.01)
    assert sp["bad"]["code"]["acceptance_per_token"] == pytest.approx(0.3, abs=0.01)
    assert sp["guard"]["code"]["stopped"] > 0.95 * bad["tenants"]["code"]["requests"]
    assert sp["guard"]["chat"]["stopped"] < 0.02 * good["tenants"]["chat"]["requests"]
    assert good["speculative"]["tokens_per_step"] == pytest.approx(expected_accepted(0.8, 4) + 1, abs=0.05)
