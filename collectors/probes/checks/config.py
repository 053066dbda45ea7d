"""[collectors.probes]: pings through fping, HTTP and TCP checks, TLS certificate expiry."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from collectors.config import Argv, CollectorBase, Seconds, Strict, unique_names

Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f]+$")]


class PingProbe(Strict):
    name: Name
    # A name or an address; never starting with "-", so it cannot read as one of fping's options.
    target: Annotated[str, Field(min_length=1, max_length=255, pattern=r"^[A-Za-z0-9.:_%][A-Za-z0-9.:_%-]*$")]
    # The source interface (one bond slave, a ppp link): fping -I, SO_BINDTODEVICE.
    interface: Annotated[str | None, Field(max_length=15, pattern=r"^[A-Za-z0-9._@][A-Za-z0-9._@-]*$")] = None
    count: Annotated[int, Field(ge=1, le=100)] = 10
    # Milliseconds between the pings to this target (fping -p).
    interval_ms: Annotated[int, Field(ge=10, le=10_000)] = 500
    loss_warning: Annotated[float, Field(ge=0, le=1)] = 0.2  # the probe_loss rule, as a share
    rtt_warning_ms: Annotated[float, Field(gt=0)] = 300.0  # the probe_latency rule, on the average


class HttpProbe(Strict):
    name: Name
    url: Annotated[str, Field(pattern=r"^https?://[^\s]+$", max_length=2000)]
    expect_status: Annotated[int, Field(ge=100, le=599)] = 200
    expect_text: str | None = None  # must appear in the first 1 MB of the body
    timeout: Seconds = 10.0
    verify_tls: bool = True


class TcpProbe(Strict):
    name: Name
    host: Annotated[str, Field(min_length=1, max_length=255)]
    port: Annotated[int, Field(ge=1, le=65535)]
    tls: bool = False  # a TLS handshake too, and its certificate's expiry (imaps, ldaps, mqtts ...)
    timeout: Seconds = 5.0
    verify_tls: bool = True


class ProbesConfig(CollectorBase):
    interval: Seconds = 60.0
    timeout: Seconds = 50.0
    fping: Argv = ["fping"]
    # The tls_expiring rule: a certificate closer to its end than this.
    tls_warning_days: Annotated[float, Field(gt=0)] = 14.0
    # How many probes run at once.
    parallel: Annotated[int, Field(ge=1, le=64)] = 8
    ping: list[PingProbe] = []
    http: list[HttpProbe] = []
    tcp: list[TcpProbe] = []

    @field_validator("ping", "http", "tcp")
    @classmethod
    def _unique(cls, probes: list[Any]) -> list[Any]:
        return unique_names(probes, "probe")
