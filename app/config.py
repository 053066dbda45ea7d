"""One TOML file configures everything; it is validated before anything starts.

``rackpulse.example.toml`` documents every key with its default. A wrong key or type
stops start-up with an error naming the file, the key and what was expected.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
)

from app.alerting.config import AlertsConfig
from app.data.config import DataConfig
from app.energy.config import EnergyConfig
from app.export.config import ExportConfig, MqttExportConfig, RemoteWriteConfig
from collectors.config import ConfigError, Seconds, Strict

DEFAULT_CONFIG_NAME = "rackpulse.toml"
# the export sections' models, where they have always been found
__all__ = ["Config", "ConfigError", "ExportConfig", "MqttExportConfig", "RemoteWriteConfig", "load_config"]


_Strict = Strict  # every section refuses unknown keys


class CollectorsConfig(_Strict):
    """[collectors.*]: one section per installed collector plug-in, each with the model the
    plug-in brings (see config_model)."""


class BayConfig(_Strict):
    label: str
    serial: str | None = None
    wwn: str | None = None
    path: str | None = None
    enclosure_slot: str | None = None
    slot: str | None = None  # a RAID controller's "EID:Slt" ("252:4"), or "<controller>/<EID:Slt>"


class AcceptConfig(_Strict):
    serial: str
    attribute: str
    value: float


class EnclosureConfig(_Strict):
    """A chassis or shelf as the bay map draws it: the bays whose labels start with its name
    ("shelf 1, bay 7"), placed in rows and columns by their number."""

    name: str
    rows: Annotated[int, Field(ge=1, le=64)]
    columns: Annotated[int, Field(ge=1, le=64)]
    # How the chassis counts its bays: along the rows (left to right, then the next row) or down
    # the columns; from the top or, as many 3U and 4U cases do, from the bottom row.
    order: Literal["rows", "columns"] = "rows"
    start: Literal["top", "bottom"] = "top"
    first: Annotated[int, Field(ge=0)] = 0  # the number of the first bay: 0 or 1 on most cases


class DisksConfig(_Strict):
    bays: list[BayConfig] = []
    enclosures: list[EnclosureConfig] = []
    accept: list[AcceptConfig] = []


class WebConfig(_Strict):
    listen: str = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 9842
    # scrypt hash made by `rackpulse hash-password`; or read from password_hash_file / $RACKPULSE_PASSWORD_HASH.
    password_hash: SecretStr | None = None
    password_hash_file: Path | None = None
    refresh_seconds: Annotated[float, Field(ge=1)] = 5.0
    # Host names this server is reached by (besides IP addresses and localhost), e.g.
    # ["nas.lan", "rackpulse.example.org"]: any other Host header is refused (DNS rebinding).
    allowed_hosts: list[str] = []
    # A read-only token for scripts (GET /api/... with "Authorization: Bearer <token>"): its
    # "sha256$<hex>" hash, printed by `rackpulse make-token`.
    api_token_hash: SecretStr | None = None
    # Serve HTTPS (agents then use https://...; agent.ca_file for a private CA).
    tls_cert_file: Path | None = None
    tls_key_file: Path | None = None
    # /status (each probe's uptime over 24 h, 7 d and 30 d, names only) without a login, for a
    # status page others may see.
    status_public: bool = False
    # Login through a reverse proxy (Authelia, Authentik, oauth2-proxy): the user's name in this
    # header, honoured only from these addresses or networks; from anywhere else it is ignored
    # (and logged). A user of that name here keeps their role; anyone else is an admin when the
    # groups header names proxy_admin_group, else a viewer.
    trusted_proxies: list[str] = []
    proxy_user_header: str = ""
    proxy_groups_header: str = "Remote-Groups"
    proxy_admin_group: str = ""
    # Requests per second each API token may make (and the burst it may save up): 429 beyond.
    token_rate: Annotated[float, Field(gt=0)] = 10.0
    token_burst: Annotated[int, Field(ge=1)] = 30

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, v: list[str]) -> list[str]:
        for net in v:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError:
                raise ValueError(f"trusted_proxies: {net!r} is not an address or a network (10.0.0.0/24)") from None
        return v


class StorageConfig(_Strict):
    url: str = "sqlite:///rackpulse.db"
    # 90 days: raw samples older than the folds read are Gorilla blocks (app/storage/blocks.py),
    # 0.3-0.5 bytes a sample, so a quarter of minutes takes less disk than 7 days of rows did
    # (bench/db_size_year.py) and a chart of an old hour still shows the minute.
    raw_days: Annotated[float, Field(gt=0)] = 90.0
    # 35 days: a chart reads 5-minute points for spans up to a month (samples.resolution) and
    # hourly ones beyond, so older 5-minute rows were 80 % of a year's database and rarely read.
    rollup_5m_days: Annotated[float, Field(gt=0)] = 35.0
    # Hourly rollups are kept this long; 0 keeps them forever.
    rollup_1h_days: Annotated[float, Field(ge=0)] = 0.0
    maintenance_interval: Seconds = 300.0
    # A bound on the database, "5GB" (or MB, TB, GiB ...): past it the oldest raw samples go
    # first, then the oldest rollups; the newest hour is kept whatever the size. Unset: none.
    max_size: str | None = None

    @field_validator("max_size")
    @classmethod
    def _size(cls, v: str | None) -> str | None:
        from app.storage.size import parse_size

        parse_size(v)
        return v


class AgentsConfig(_Strict):
    """The server side: what it accepts from agents (`rackpulse agents issue HOST` makes tokens)."""

    # A host that sent nothing for this long is an alert (agent_silent).
    silent_after: Seconds = 120.0
    # A bigger request body, or one that inflates beyond this, is refused (413) before parsing.
    max_batch_bytes: Annotated[int, Field(ge=1024)] = 16 * 1024 * 1024
    # |server clock - agent clock| above this is a warning (agent_clock_skew).
    clock_skew_warning: Seconds = 30.0
    # An agent host may have this many series; a batch that would add more is refused (422) and
    # agent_cardinality fires. It bounds the server's memory and database against a runaway label.
    max_series_per_host: Annotated[int, Field(ge=1)] = 20_000
    # Memory is bounded before a batch is parsed: a body holding more samples, points or entities
    # than this (counted as its JSON lists, a cheap upper bound) is refused with 413 and the agent
    # sends smaller batches. An agent's usual 4 MiB batch holds about 70,000.
    max_batch_items: Annotated[int, Field(ge=100)] = 200_000
    # Batches parsed and stored at once; the others wait for a turn (up to ingest_wait, then 503
    # and the agent retries). Each one parsed can take ~100 MB at max_batch_items.
    max_concurrent_ingests: Annotated[int, Field(ge=1)] = 2
    ingest_wait: Seconds = 30.0
    # Per agent host: distinct collector names, inventory entities, and one collector's state as
    # JSON. Past them a batch is refused (422) and agent_cardinality fires, like the series limit.
    max_collectors_per_host: Annotated[int, Field(ge=1)] = 64
    max_entities_per_host: Annotated[int, Field(ge=1)] = 50_000
    # Changes to known inventory (a disk's bay, a peer's state) an agent host may make an hour: past
    # it a batch is refused and agent_cardinality fires (one batch of 100,000 changes grew the
    # database by 20 MB, and storage.max_size then had nothing but history to give up).
    max_entity_changes_per_hour: Annotated[int, Field(ge=1)] = 10_000
    max_state_bytes: Annotated[int, Field(ge=1024)] = 2 * 1024 * 1024
    # Agent hosts with a live token: `agents issue` refuses one more (each host costs the server
    # its snapshot, series and pages; revoke one first).
    max_hosts: Annotated[int, Field(ge=1)] = 500


class AgentConfig(_Strict):
    """The agent side: `rackpulse agent --server URL` pushes this host's collections to a server."""

    server: str | None = None
    # The token `rackpulse agents issue HOST` printed; or $RACKPULSE_AGENT_TOKEN.
    token_file: Path | None = None
    # Batches wait here (SQLite) until the server took them: nothing is lost while it is down.
    outbox: Path = Path("/var/lib/rackpulse/agent-outbox.db")
    # Past this size the oldest raw batches are folded into 5-minute, then hourly rollups;
    # only when those fill it too are the oldest hours dropped.
    outbox_max_mb: Annotated[float, Field(gt=0)] = 256.0
    batch_max_bytes: Annotated[int, Field(ge=1024)] = 4 * 1024 * 1024
    send_interval: Seconds = 5.0
    timeout: Seconds = 15.0
    # A private CA for an https:// server (else the system's store).
    ca_file: Path | None = None
    # Serve this host's /metrics too (for a Prometheus that scrapes every host); off when unset.
    listen: str | None = None
    port: Annotated[int, Field(ge=1, le=65535)] = 9843

    def token(self) -> str | None:
        if self.token_file:
            return self.token_file.read_text().strip() or None
        return os.environ.get("RACKPULSE_AGENT_TOKEN") or None


class Config(_Strict):
    host: str = Field(default_factory=socket.gethostname)
    host_root: Path = Path("/")
    web: WebConfig = WebConfig()
    storage: StorageConfig = StorageConfig()
    collectors: CollectorsConfig = CollectorsConfig()
    disks: DisksConfig = DisksConfig()
    alerts: AlertsConfig = AlertsConfig()
    agents: AgentsConfig = AgentsConfig()
    agent: AgentConfig = AgentConfig()
    export: ExportConfig = ExportConfig()
    energy: EnergyConfig = EnergyConfig()
    data: DataConfig = DataConfig()  # the /data page's sets: what is on which array, and its copies
    # Where the file came from, for relative paths and error messages (not a TOML key).
    source: Path | None = Field(default=None, exclude=True)

    def _moved(self) -> list[tuple[str, str, Any]]:
        """Plug-in keys set in this file that now live elsewhere: (the old key, where it lives now,
        its value). Each plug-in names its own (CollectorPlugin.legacy.moved)."""
        from collectors import plugins

        out = []
        for name, plugin in plugins().items():
            section = getattr(self.collectors, name, None)
            for key, target in plugin.legacy.moved.items():
                if section is not None and key in section.model_fields_set:
                    out.append((f"collectors.{name}.{key}", target, getattr(section, key)))
        return out

    def deprecations(self) -> list[str]:
        """Keys that still work but have another name now (check-config and serve say so)."""
        out = []
        for old, target, _ in self._moved():
            section, _, key = target.rpartition(".")
            is_set = key in getattr(self, section).model_fields_set
            out.append(f"{old} is deprecated: {target} is the one setting for it" +
                       (f"; {target} is set and wins" if is_set else f"; it is used while {target} is not set"))
        return out

    def disk_hot_celsius(self) -> float:
        """The temperature from which a disk is hot: alerts.disk_hot_celsius, or a plug-in's
        deprecated key for it (collectors.smart.temperature_warning) when only that one is set."""
        if "disk_hot_celsius" not in self.alerts.model_fields_set:
            for _, target, value in self._moved():
                if target == "alerts.disk_hot_celsius":
                    return float(value)
        return self.alerts.disk_hot_celsius

    def schedules(self, names: Iterable[str]) -> dict[str, tuple[float, float]]:
        """(interval, timeout) of each named collector, for the scheduler."""
        return {n: (getattr(self.collectors, n).interval, getattr(self.collectors, n).timeout) for n in names}

    def password_hash(self) -> str | None:
        if self.web.password_hash:
            return self.web.password_hash.get_secret_value()
        if self.web.password_hash_file:
            return self.web.password_hash_file.read_text().strip() or None
        return os.environ.get("RACKPULSE_PASSWORD_HASH") or None


def resolve_config_path(arg: str | None) -> Path | None:
    """--config, then $RACKPULSE_CONFIG, then ./rackpulse.toml; None if none exists (defaults)."""
    if arg:
        return Path(arg)
    env = os.environ.get("RACKPULSE_CONFIG")
    if env:
        return Path(env)
    local = Path(DEFAULT_CONFIG_NAME)
    return local if local.exists() else None


class DisabledSection(_Strict):
    """The section of a plug-in this process did not load (an agent loads only what its config
    enables): it may only say it is off, and is not read further."""

    model_config = ConfigDict(extra="allow")
    enabled: Literal[False] = False


def config_model() -> type[Config]:
    """Config, with a [collectors.<name>] section for every installed collector plug-in (one not
    loaded here: a DisabledSection)."""
    from collectors import plugins
    from collectors.plugin import installed

    loaded = plugins()
    off = tuple((name, DisabledSection) for name in installed() if name not in loaded)
    return _model_for(tuple((name, p.config) for name, p in loaded.items()) + off)


def enabled_sections(path: Path | None) -> list[str]:
    """The installed plug-ins the file at `path` does not turn off (`enabled = false`): on by
    default, as every section is. Read before the config is validated, to load only these."""
    from collectors.plugin import installed

    # Any: TOML as read, before Config validates it
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(path.read_text())
        except (OSError, tomllib.TOMLDecodeError):
            data = {}  # load_config says what is wrong with it
    found = data.get("collectors")
    sections: dict[str, Any] = found if isinstance(found, dict) else {}
    return [n for n in installed()
            if not (isinstance(sections.get(n), dict) and sections[n].get("enabled") is False)]


@functools.cache
def _model_for(sections_in: tuple[tuple[str, type[Strict]], ...]) -> type[Config]:
    # Any: pydantic's create_model takes each field as a (type, default) pair of any types
    fields: dict[str, Any] = {name: (model, model()) for name, model in sections_in}
    sections = create_model("CollectorsConfig", __base__=CollectorsConfig, **fields)
    return create_model("Config", __base__=Config, collectors=(sections, sections()))


# Any: TOML as read, before Config validates it
def load_config(path: Path | None, overrides: dict[str, Any] | None = None, text: str | None = None) -> Config:
    """The config file (or `text`, read from it already: a reload's settled read) validated."""
    data: dict[str, Any] = {}
    name = str(path) if path else "<defaults>"
    if path is not None:
        try:
            data = tomllib.loads(path.read_text() if text is None else text)
        except FileNotFoundError:
            raise ConfigError(f"{name}: file not found") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{name}: not valid TOML: {exc}") from None
    if overrides:
        data = _merge(data, overrides)
    try:
        cfg = config_model().model_validate({**data, "source": path})
    except ValidationError as exc:
        raise ConfigError(format_errors(name, exc)) from None
    return cfg


def format_errors(name: str, exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            lines.append(f"{name}: unknown key '{key}'")
        elif _is_secret(err["loc"]):
            lines.append(f"{name}: key '{key}': {err['msg'].lower()} (value not shown: it is a secret)")
        else:
            lines.append(f"{name}: key '{key}': {err['msg'].lower()} (got {_shown(err.get('input'))})")
    return "\n".join(lines)


def _shown(value: Any) -> str:
    """What a config error may say of the input it refused. A table or a list is named by its
    shape only: an error on `[alerts.channels]` (one bracket) sits on the parent of a URL and
    would otherwise print the whole table, webhook token and all. A URL shows its scheme and host."""
    if isinstance(value, dict):
        keys = ", ".join(str(k) for k in list(value)[:8])
        return f"a table with keys {keys}" if value else "an empty table"
    if isinstance(value, list | tuple):
        return f"a list of {len(value)} items"
    if isinstance(value, str) and "://" in value:
        scheme, _, rest = value.partition("://")
        host = rest.split("/", 1)[0].rpartition("@")[2]
        return repr(f"{scheme}://{host}/…")
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


SECRET_KEYS = frozenset({"password_hash", "api_token_hash", "community", "auth_password", "priv_password", "url",
                         "headers", "password", "token", "basic_auth", "secret", "api_key"})


def _is_secret(loc: tuple[Any, ...]) -> bool:
    """Whether an error's place is (inside) a key whose value must never be printed."""
    return any(isinstance(p, str) and p in SECRET_KEYS for p in loc)


# Any: TOML as read, before Config validates it
def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out
