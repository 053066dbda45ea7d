"""borg: each BorgBackup repository's newest archive per host and paths, its size, and its checks."""

from collectors.backup_section import FOLDER
from collectors.host.borg import findings
from collectors.host.borg.collector import BorgCollector, build
from collectors.host.borg.config import BorgConfig
from collectors.host.borg.demo import write_scene
from collectors.host.borg.state import BorgState
from collectors.plugin import CollectorPlugin, Pages, Section, Setup

SECTION: Section[BorgState] = Section("host", "Host", FOLDER, findings.view)
PERMISSIONS = ("Read access to the repository (a local path: its files; ssh: a key the repository's host "
               "accepts, best one with borg serve --append-only or --restrict-to-path) and to passphrase_file. "
               "Only list, info (both --bypass-lock) and check run.")

PLUGIN = CollectorPlugin(
    "borg", BorgCollector, build, BorgConfig, BorgState,
    domain="host", rank=10, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, nouns={"backup repository": "backup repository"}), setup=Setup(scene=write_scene))
