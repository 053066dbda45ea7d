"""proxmox: a Proxmox VE cluster through its API: guests and their newest backups, nodes,
quorum, storages, replication and failed tasks."""

from pathlib import Path

from collectors.host.proxmox import findings
from collectors.host.proxmox.collector import ProxmoxCollector, build
from collectors.host.proxmox.config import ProxmoxConfig
from collectors.host.proxmox.demo import write_scene
from collectors.host.proxmox.state import ProxmoxState
from collectors.plugin import CollectorPlugin, Needs, Pages, Section, Setup

SECTION: Section[ProxmoxState] = Section("host", "Host", Path(__file__).parent)
# What it needs (its README says it: `make docs`).
PERMISSIONS = ("An API token with the PVEAuditor role on / (Sys.Audit, VM.Audit, Datastore.Audit): read-only. A token "
               "made with privilege separation needs that ACL itself (pveum acl modify / --tokens ID --roles "
               "PVEAuditor). Only HTTPS GET; the secret is read from token_secret_file and sent to no other host.")

PLUGIN = CollectorPlugin(
    "proxmox", ProxmoxCollector, build, ProxmoxConfig, ProxmoxState,
    domain="host", rank=7, findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, charts=findings.CHARTS,
                nouns={"pve_vm": "Proxmox VM", "pve_ct": "Proxmox container"}),
    needs=Needs(uses=("pbs",)),
    setup=Setup(scene=write_scene))
