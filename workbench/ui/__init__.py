"""Matplotlib figures and ipywidgets panels over the library (no logic of their own)."""
