"""HAProxy: frontends, backends and servers from the stats socket's `show stat` (or the stats page's CSV)."""

from pathlib import Path

from collectors.network.haproxy import findings
from collectors.network.haproxy.collector import HaproxyCollector, build
from collectors.network.haproxy.config import HaproxyConfig
from collectors.network.haproxy.demo import write_scene
from collectors.network.haproxy.starter import starter
from collectors.network.haproxy.state import HaproxyState
from collectors.plugin import CollectorPlugin, Pages, Section, Setup

SECTION: Section[HaproxyState] = Section("network", "Network", Path(__file__).parent, findings.view)
PERMISSIONS = ("Read and write access to HAProxy's stats socket (its `mode` and `group` in haproxy.cfg; "
               "`level user` is enough: only `show stat` and `show info` are sent), or the stats page's URL.")

PLUGIN = CollectorPlugin(
    "haproxy", HaproxyCollector, build, HaproxyConfig, HaproxyState,
    domain="network", findings=findings.findings, rules=findings.RULES, tile=findings.TILE,
    pages=Pages(section=SECTION, nouns={"haproxy_server": "HAProxy server"}),
    setup=Setup(scene=write_scene, starter=starter))
