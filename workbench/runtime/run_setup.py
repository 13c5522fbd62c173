"""One run's set-up, what every loop reads: requests, their classification, queues, batch classes, policies.

The engine (:mod:`workbench.runtime.engine`) builds it and hands it to the loop it picks (the
compiled loop, the FIFO fast path or the readable event loop), each of which reads the same
fields. The queues are one per stream and shape bucket; the batch classes group the requests
that may share a batch (same bucket, same model, same eligible cores). All state, the seeded
generator included, lives on this object.
"""

from __future__ import annotations

import numpy as np

from workbench.config import Scenario
from workbench.runtime.allocator import release_free_memory
from workbench.runtime.policies import make_policies
from workbench.runtime.service import AbstractLaw
from workbench.runtime.workload import generate
from workbench.service_model import Requests, ServiceModel
from workbench.unique import distinct_values

LOOPS = ("auto", "compiled", "aot", "jit", "fastpath", "python")  # aot, jit: the compiled loop from that build


class RunSetup:
    """A run of a scenario through a service model, set up: what the loops read."""

    def __init__(self, scenario: Scenario, model: ServiceModel | None = None,
                 requests: Requests | None = None, loop: str = "auto"):
        if loop not in LOOPS:
            raise ValueError(f"loop must be one of {LOOPS}, not {loop!r}")
        self.loop = loop  # auto | compiled | aot | jit | fastpath | python (all but auto only where they apply)
        self.scenario = scenario
        self.model = model if model is not None else AbstractLaw(scenario.service)
        self.requests = requests if requests is not None else generate(scenario)
        self.rng = np.random.default_rng(np.random.SeedSequence([scenario.seed, 2]))
        self.batching, self.discipline, self.placement = make_policies(scenario)
        self._setup_classes()
        release_free_memory(len(self.requests))  # generation and classification freed large temporaries

    def _setup_classes(self) -> None:
        """Queues per (stream, bucket); batch classes per (bucket, model, eligible cores)."""
        sc, cls = self.scenario, self.model.classify(self.requests)
        self.classification = cls
        nb, streams = len(cls.bucket_names), sc.streams
        names = [m.name for m in sc.models]
        self.stream_model = [names.index(s.model) if s.model else 0 for s in streams]
        qid = self.qid
        class_of: dict[tuple, int] = {}
        self.q_class = [-1] * (len(streams) * nb)
        self.class_qs: list[list[int]] = []
        self.class_bucket: list[int] = []
        self.class_model: list[int] = []
        self.class_cores: list[tuple[int, ...]] = []
        for q in distinct_values(qid[qid >= 0]).tolist():
            s, b = divmod(q, nb)
            key = (b, self.stream_model[s], self.placement.eligible(s, b, cls.bucket_cores))
            if key not in class_of:
                class_of[key] = len(self.class_qs)
                self.class_qs.append([])
                self.class_bucket.append(b)
                self.class_model.append(key[1])
                self.class_cores.append(key[2])
            self.q_class[q] = class_of[key]
            self.class_qs[class_of[key]].append(q)

    @property
    def qid(self) -> np.ndarray:
        """Each request's queue, stream x buckets + bucket (int32; -1 = refused by the plan).

        Computed when a loop asks (once per run), not kept: the loops hold their own copy.
        """
        bucket, nb = self.classification.bucket, len(self.classification.bucket_names)
        qid = self.requests.stream.astype(np.int32) * nb
        qid += bucket
        qid[bucket < 0] = -1
        return qid
