"""pbs: a Proxmox Backup Server through its API: datastores, each backup group's newest
snapshot and whether it verified, and its jobs."""

from pathlib import Path

from collectors.host.pbs import findings
from collectors.host.pbs.collector import PbsCollector, build
from collectors.host.pbs.config import PbsConfig
from collectors.host.pbs.state import PbsState
from collectors.plugin import CollectorPlugin, Pages, Section

SECTION: Section[PbsState] = Section("host", "Host", Path(__file__).parent, findings.view)
PERMISSIONS = ("An API token with the Audit role on / (Datastore.Audit, Sys.Audit, Remote.Audit): read-only "
               "(proxmox-backup-manager acl update / Audit --auth-id ID). Only HTTPS GET; the secret is read from "
               "token_secret_file and sent to no other host.")

PLUGIN = CollectorPlugin(
    "pbs", PbsCollector, build, PbsConfig, PbsState,
    domain="host", rank=8, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, nouns={"backup group": "backup group"}))
