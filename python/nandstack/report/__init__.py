"""Experiment reports: figures (matplotlib, optional), CSV tables and a self-contained HTML page."""

from .reproduce import Report, default_out_dir, reproduce

__all__ = ["Report", "default_out_dir", "reproduce"]
