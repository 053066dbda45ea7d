"""The section of /host every backup plug-in (restic, borg) draws: section.html, read with the
view of collectors/backup.py."""

from pathlib import Path

FOLDER = Path(__file__).parent
