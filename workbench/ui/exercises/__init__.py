"""Exercise checkers: right, wrong with a hint, or not answered yet (the contract in ``base``).
``tour_envelopes`` 00 and 01, ``fusion`` 02, ``batching`` 03, ``fairness_residency`` 04 and 05,
``loop_drills`` 06 and 07, ``serving`` 08."""
