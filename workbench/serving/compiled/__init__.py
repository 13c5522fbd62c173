"""The token-level serving loop compiled with numba, laid out as :mod:`workbench.runtime.compiled` is.

:mod:`.layout` names the slots of the flat arrays, :mod:`.loop` (queues, scheduling) and :mod:`.run` (the
iteration loop, buckets, the price) are the kernel, :mod:`.driver` its Python side
(:func:`~workbench.serving.compiled.driver.simulate_compiled`). The readable loop
(:mod:`workbench.serving.engine`) is the reference; ``tests/test_serving_compiled.py`` proves the two equal.
"""
