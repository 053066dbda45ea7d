"""restic: each repository's newest snapshot per host and paths, its size, and its checks."""

from collectors.backup_section import FOLDER
from collectors.host.restic import findings
from collectors.host.restic.collector import ResticCollector, build
from collectors.host.restic.config import ResticConfig
from collectors.host.restic.demo import write_scene
from collectors.host.restic.state import ResticState
from collectors.plugin import CollectorPlugin, Pages, Section, Setup

SECTION: Section[ResticState] = Section("host", "Host", FOLDER, findings.view)
PERMISSIONS = ("Read access to the repository (a local path: its files; a remote one: its credentials) and to "
               "password_file. Only snapshots, stats and check run, snapshots and stats with --no-lock; check "
               "takes the repository's exclusive lock, so it runs only with check_every.")

PLUGIN = CollectorPlugin(
    "restic", ResticCollector, build, ResticConfig, ResticState,
    domain="host", rank=9, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, nouns={"backup repository": "backup repository"}), setup=Setup(scene=write_scene))
