"""What is wrong with borg repositories: the findings, rules and tile every backup plug-in
shares (collectors/backup.py)."""

from __future__ import annotations

from collectors.backup import RULES, all_clear, findings, tile, view

TILE = tile("borg")
__all__ = ["RULES", "TILE", "all_clear", "findings", "view"]
