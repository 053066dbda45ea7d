"""The [export] section: Home Assistant over MQTT and Prometheus remote write. Secrets (the
broker's password file, an Authorization header) stay SecretStr until the exporter uses them.

May import: collectors.config (the base every section extends)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr

from collectors.config import Seconds, Strict

_Strict = Strict  # every section refuses unknown keys


class MqttExportConfig(_Strict):
    """[export.mqtt]: Home Assistant's MQTT discovery."""

    url: Annotated[str, Field(pattern=r"^mqtts?://[^\s/]+(:\d+)?/?$")]  # mqtt://broker.lan:1883, mqtts:// for TLS
    username: str | None = None
    password_file: Path | None = None
    discovery_prefix: str = "homeassistant"
    topic_prefix: str = "rackpulse"
    client_id: str | None = None  # default: one the broker picks
    interval: Seconds = 30.0  # how often states are looked at (only changes are sent)

    def password_value(self) -> str | None:
        return self.password_file.read_text().strip() or None if self.password_file else None


class RemoteWriteConfig(_Strict):
    """[[export.remote_write]]: Prometheus remote write 1.0 to Mimir, VictoriaMetrics, Thanos ..."""

    url: Annotated[str, Field(pattern=r"^https?://\S+$")]
    # Header values often carry a token (X-Scope-OrgID is fine to show, Authorization is not).
    headers: dict[str, SecretStr] = {}
    basic_auth: dict[str, SecretStr] = {}  # {username = "...", password = "..."} or password_file
    interval: Seconds = 30.0
    timeout: Seconds = 30.0
    batch_samples: Annotated[int, Field(ge=100, le=1_000_000)] = 10_000
    # How far back a first start (or a long outage) catches up; older samples are skipped.
    max_backlog_hours: Annotated[float, Field(gt=0)] = 24.0

    def auth(self) -> tuple[str, str] | None:
        if not self.basic_auth:
            return None
        user = self.basic_auth.get("username")
        pw = self.basic_auth.get("password")
        pw_file = self.basic_auth.get("password_file")
        password = pw.get_secret_value() if pw else Path(pw_file.get_secret_value()).read_text().strip() if pw_file \
            else ""
        return (user.get_secret_value() if user else "", password)


class ExportConfig(_Strict):
    mqtt: MqttExportConfig | None = None
    remote_write: list[RemoteWriteConfig] = []
