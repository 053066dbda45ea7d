"""The [alerts] section of the config: rules and their overrides (two levels), channels (their
URLs secret), maintenance windows, dependencies, grouping and the time zone of quiet hours."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, SecretStr, ValidationInfo, field_validator, model_validator

from collectors.config import Seconds, Strict

if TYPE_CHECKING:
    from app.alerting.dependencies import Dependency

_Strict = Strict


class RuleOverride(_Strict):
    enabled: bool = True
    severity: Literal["critical", "warning", "info"] | None = None
    # seconds the condition must hold before it fires
    for_seconds: Annotated[float, Field(ge=0)] | None = None
    reminder_hours: Annotated[float, Field(ge=0)] | None = None
    # Two levels for a threshold rule (disk_hot, filesystem_full, probe_latency, probe_loss,
    # ups_battery_low, tls_expiring, rail_out_of_range): one episode goes from warning to critical
    # with one escalation notification; back to warning it stays critical until it resolves.
    warning: float | None = None
    critical: float | None = None


class UserRuleConfig(_Strict):
    name: str
    metric: str
    labels: dict[str, str] = {}
    op: Literal[">", "<", ">=", "<=", "==", "!="] = ">"
    threshold: float
    # Hysteresis: once firing, it clears only when the value passes this one.
    clear_threshold: float | None = None
    for_seconds: Annotated[float, Field(ge=0)] = 0.0
    severity: Literal["critical", "warning", "info"] = "warning"
    reminder_hours: Annotated[float, Field(ge=0)] = 0.0
    # {metric}, {value}, {labels} and {label_<name>} are filled in.
    message: str = "{metric}{labels} is {value}"


class ChannelConfig(_Strict):
    name: str
    # "apprise": url is any Apprise URL (mailto://, mailtos://, tgram://, pover://, matrix://,
    # signal://, ntfy:// ...; https://github.com/caronc/apprise/wiki), sent through the same outbox.
    # Declared before url so that url's check knows which kind of URL it is.
    format: Literal["rackpulse", "alertmanager", "ntfy", "gotify", "discord", "slack", "template",
                    "apprise"] = "rackpulse"
    # Webhook URLs often carry a token (Slack, Discord, ntfy), Apprise URLs a password: kept
    # secret like one, never in a log line, a page, an error or check-config's output.
    url: SecretStr
    severities: list[str] = []
    rules: list[str] = []
    timeout: Seconds = 10.0
    headers: dict[str, SecretStr] = {}
    template: str | None = None
    max_age_hours: Annotated[float, Field(gt=0)] = 72.0
    # false: every event on its own, even when alerts.group_wait groups them for other channels
    group: bool = True
    # > 0: a second line. Only what still fires unacknowledged this many minutes after it began
    # is sent here (and the resolution of what was sent).
    escalate_after_minutes: Annotated[float, Field(ge=0)] = 0.0
    # "23:00-07:00" in alerts.timezone: warnings wait until the end; critical ones pass.
    quiet_hours: str | None = None

    @field_validator("quiet_hours")
    @classmethod
    def _quiet_shape(cls, v: str | None) -> str | None:
        if v is not None:
            from app.alerting.policy import parse_quiet

            parse_quiet(v)
        return v

    @field_validator("url")
    @classmethod
    def _url_fits_format(cls, v: SecretStr, info: ValidationInfo) -> SecretStr:
        url = v.get_secret_value()
        if problem := _port_problem(url):
            raise ValueError(f"channel {info.data.get('name')!r}: {problem}")
        if info.data.get("format") == "apprise":
            # The error names the scheme at most, never the URL.
            from app.alerting.apprise_channel import url_problem

            problem = url_problem(url)
            if problem:
                raise ValueError(f"channel {info.data.get('name')!r}: {problem}")
        elif not url.lower().startswith(("http://", "https://")):
            # urllib would also open file:// and ftp:// URLs: only HTTP(S) is a webhook.
            raise ValueError(f"channel {info.data.get('name')!r}: must be an http:// or https:// URL "
                             '(or set format = "apprise" for an Apprise URL)')
        return v


def _port_problem(url: str) -> str | None:
    """A port in the URL outside 1-65535, in words that never repeat the URL (it may hold a token)."""
    import urllib.parse

    if "://" not in url:
        return None
    try:
        port = urllib.parse.urlsplit(url).port
    except ValueError:
        return "its port is not a number from 1 to 65535"
    return "its port is not a number from 1 to 65535" if port == 0 else None


class WindowConfig(_Strict):
    days: list[str]
    start: str
    hours: Annotated[float, Field(gt=0)]
    first_of_month: bool = False
    rules: list[str] = []


class MatchConfig(_Strict):
    # Exactly, or a shell-style pattern ("probe_*", "10.0.250.*"); left out: any.
    rule: Annotated[str, Field(max_length=200)] | None = None
    subject: Annotated[str, Field(max_length=200)] | None = None


class DependencyConfig(_Strict):
    """While an alert matching `parent` fires, the alerts matching a child send nothing (the
    alerts page says "suppressed by" the parent); one still firing when the parent resolves is
    told then."""

    parent: MatchConfig
    children: Annotated[list[MatchConfig], Field(min_length=1)]


def dependencies_of(alerts: AlertsConfig) -> list[Dependency]:
    from app.alerting.dependencies import Dependency, Match

    return [Dependency(Match(d.parent.rule, d.parent.subject), tuple(Match(c.rule, c.subject) for c in d.children))
            for d in alerts.dependencies]


class AlertsConfig(_Strict):
    enabled: bool = True
    interval: Seconds = 15.0
    # Link back to this rackpulse in notifications, e.g. "https://rackpulse.lan".
    base_url: str = ""
    # A link, slave or port that changes state flap_count times within flap_window is flapping
    # (and interface errors are counted over the same window).
    flap_count: Annotated[int, Field(ge=1)] = 3
    flap_window: Annotated[float, Field(ge=60)] = 3600.0
    disk_hot_celsius: float = 50.0
    # One host's alerts that fire (or resolve) within this many seconds go out as one
    # notification per channel ("3 problems on nas1: ..."); the first waits this long. 0: off.
    group_wait: Annotated[float, Field(ge=0, le=3600)] = 30.0
    # The time zone of channels' quiet_hours, e.g. "Europe/Berlin"; left out: the host's.
    timezone: str | None = None

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str | None) -> str | None:
        if v is not None:
            import zoneinfo

            try:
                zoneinfo.ZoneInfo(v)
            except (zoneinfo.ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {v!r} (an IANA name such as \"Europe/Berlin\")") from None
        return v
    rules: dict[str, RuleOverride] = {}
    user_rules: list[UserRuleConfig] = []
    channels: list[ChannelConfig] = []
    maintenance: list[WindowConfig] = []
    dependencies: list[DependencyConfig] = []

    @model_validator(mode="after")
    def _no_ring(self) -> AlertsConfig:
        from app.alerting.dependencies import find_cycle

        ring = find_cycle(dependencies_of(self))
        if ring:
            said = " -> ".join(f"#{i + 1} (parent {dependencies_of(self)[i].parent})" for i in ring)
            raise ValueError(f"alerts.dependencies explain each other in a ring: {said}; "
                             "an alert in a ring would never be told")
        return self
