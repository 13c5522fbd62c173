"""Helpers shared by the tests: small scenarios built in Python, hand-made workloads."""

from __future__ import annotations

import numpy as np

from workbench.config import Arrivals, Batching, Scenario, Scheduler, Service, Stream
from workbench.grading.drills import load_drills
from workbench.grading.grader import grade
from workbench.hardware import Hardware
from workbench.service_model import Requests


def scenario(rates=(0.8,), cores=1, requests=2000, seed=1, streams=None, **kw) -> Scenario:
    """A Poisson scenario with one stream per rate (stream i has priority i); other fields by keyword."""
    if streams is None:
        streams = tuple(Stream(f"s{i}", Arrivals(rate=r), priority=i) for i, r in enumerate(rates))
    kw.setdefault("service", Service())
    kw.setdefault("batching", Batching())
    kw.setdefault("scheduler", Scheduler())
    kw.setdefault("hardware", Hardware(cores=cores))
    return Scenario(streams=tuple(streams), seed=seed, requests=requests, **kw)


def hand_requests(times, streams=None) -> Requests:
    """A workload with the given arrival times (s) and stream indices."""
    t = np.asarray(times, dtype=float)
    s = np.zeros(len(t), dtype=np.int32) if streams is None else np.asarray(streams, dtype=np.int32)
    return Requests(arrival_s=t, stream=s, shapes={})


def run_cli(argv: list[str], seconds: float = 60.0) -> tuple[int | str, str, str]:
    """The ``workbench`` command run in-process, bounded in wall-clock time: (status, stdout, stderr).

    The status is the exit code, or ``"timeout"`` past ``seconds``, or ``"raised ..."`` when an
    exception (a traceback) escaped ``main``.
    """
    import contextlib
    import io
    import signal

    from workbench.cli import main

    def expire(signum, frame):
        raise TimeoutError

    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status: int | str = main(argv)
    except SystemExit as e:  # argparse refusals
        status = e.code if isinstance(e.code, int) else 2
    except TimeoutError:
        status = "timeout"
    except BaseException as e:  # noqa: BLE001 - whatever escapes main is the finding
        status = f"raised {e.__class__.__name__}: {str(e)[:300]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    return status, out.getvalue(), err.getvalue()


def plan_scenarios(rates=(200.0, 5000.0), batching=("none", "dynamic"), placements=("least-loaded", "pinned")):
    """A hypothesis strategy: small transformer-block scenarios through a compiled plan, over every fusion level,
    envelope shape and out-of-envelope policy; ``rates``, ``batching`` and ``placements`` set what is drawn."""
    from hypothesis import strategies as st

    from workbench.config import ModelSpec, ShapeDist

    @st.composite
    def draw_one(draw) -> Scenario:
        cores = draw(st.integers(1, 4))
        stream = Stream("s", Arrivals(rate=draw(st.floats(*rates))),
                        shapes={"seq": ShapeDist("lognormal", median=draw(st.floats(20.0, 900.0)), sigma=0.6)})
        model = ModelSpec(graph="transformer_block", params={"d_model": 128, "heads": 2},
                          fusion=draw(st.sampled_from(["none", "elementwise", "aggressive"])),
                          envelope={"seq": draw(st.sampled_from([[128, 512], [{"min": 64, "opt": 128, "max": 128},
                                                                              {"min": 256, "opt": 300,
                                                                               "max": 512}]]))},
                          out_of_envelope=draw(st.sampled_from(["reject", "pad", "recompile", "fallback"])),
                          recompile_limit=draw(st.integers(0, 3)), recompile_pause_s=0.01,
                          noise_cv=draw(st.sampled_from([0.0, 0.2])))
        return Scenario(streams=(stream,), seed=draw(st.integers(0, 1000)), requests=draw(st.integers(20, 300)),
                        warmup_fraction=0.0, hardware=Hardware(cores=cores, hbm_bandwidth_bytes_per_s=0.2e12),
                        batching=Batching(policy=draw(st.sampled_from(list(batching))), max_batch=4,
                                          max_delay_s=0.001),
                        scheduler=Scheduler(placement=draw(st.sampled_from(list(placements)))), model=model)

    return draw_one()


def assert_claims_nothing(drill_id: str, answer: str) -> None:
    """The answer, graded for the built-in drill ``drill_id``, is weak with no element found (a gamed form)."""
    g = grade(load_drills()[drill_id], answer)
    assert g.verdict == "weak" and not any(e.present for e in g.elements.values()), g.elements
