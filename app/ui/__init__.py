"""Widgets only: each view takes the model it shows."""
