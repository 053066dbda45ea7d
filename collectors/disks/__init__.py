"""Disks and what holds them: md arrays, SMART, and where each disk sits (location.py)."""
