"""Helpers shared by the tests: small scenarios built in Python, hand-made workloads."""

from __future__ import annotations

import numpy as np

from workbench.config import Arrivals, Batching, Scenario, Scheduler, Service, Stream
from workbench.hardware import Hardware
from workbench.runtime.workload import Requests


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
