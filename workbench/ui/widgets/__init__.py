"""Widgets of the learner's loop: ``prediction`` (predict, commit, then observe) over ``predictions`` (the check)."""
