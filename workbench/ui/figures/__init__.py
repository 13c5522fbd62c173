"""Figures: drawing only, every number from the library (a chapter's pictures: ``envelopes`` 01, ``fusion`` and
``roofline`` 02, ``knee`` 03, ``fairness`` 04, ``residency`` 05, ``closed_loop`` 06, ``drills`` 07, ``serving`` 08;
``timeline`` and ``survival`` for every chapter; ``base``, ``palette`` and ``layers`` shared)."""
