"""[collectors.smartplugs]: metering smart plugs over MQTT (Shelly Gen2, Tasmota, or any JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from collectors.config import CollectorBase, Seconds, Strict, secret_value, unique_names

# How long a plug may say nothing before it is "no data": a few of its reporting periods
# (Shelly publishes a metering plug's status at least each minute, Tasmota each TelePeriod, 300 s).
SILENT_AFTER = {"shelly": 300.0, "tasmota": 900.0, "mqtt": 900.0}


class Plug(Strict):
    name: Annotated[str, Field(min_length=1)]
    kind: Literal["shelly", "tasmota", "mqtt"] = "shelly"
    # shelly: its topic prefix ("shellyplugpm-rack"); tasmota: its topic ("rack-plug");
    # mqtt: the whole topic its JSON arrives on
    topic: Annotated[str, Field(min_length=1)]
    channel: Annotated[int, Field(ge=0)] = 0  # shelly: the switch's id (switch:1 on a 2PM)
    power_path: str | None = None  # mqtt: where its watts are in the JSON ("ENERGY.Power")
    energy_path: str | None = None  # mqtt: where its energy counter is; none: integrated from watts
    energy_unit: Literal["Wh", "kWh", "J"] = "kWh"
    silent_after: Seconds | None = None  # default by kind: SILENT_AFTER
    # The most the plug can pass (16 A at 230 V): its counter rising faster, or falling and coming
    # back, is a bad read, never energy (a counter flapping 1,000,000 Wh / 0 booked 10,000 kWh).
    max_watts: Annotated[float, Field(gt=0)] = 3680.0

    @model_validator(mode="after")
    def _paths(self) -> Plug:
        if self.kind == "mqtt" and not (self.power_path or self.energy_path):
            raise ValueError(f"plug {self.name}: kind = \"mqtt\" needs power_path or energy_path")
        return self

    def subscription(self) -> str:
        if self.kind == "shelly":
            return f"{self.topic}/status/switch:{self.channel}"
        if self.kind == "tasmota":
            return f"tele/{self.topic}/SENSOR"
        return self.topic

    def quiet_limit(self) -> float:
        return self.silent_after or SILENT_AFTER[self.kind]


class SmartplugsConfig(CollectorBase):
    interval: Seconds = 30.0
    broker: str = "mqtt://127.0.0.1:1883"  # mqtts:// for TLS
    username: str | None = None
    password: SecretStr | None = None
    password_file: Path | None = None
    plugs: list[Plug] = []

    @field_validator("plugs")
    @classmethod
    def _unique(cls, v: list[Plug]) -> list[Plug]:
        return unique_names(v, "collectors.smartplugs.plugs")

    @field_validator("broker")
    @classmethod
    def _scheme(cls, v: str) -> str:
        if not v.startswith(("mqtt://", "mqtts://")):
            raise ValueError(f"broker must be mqtt://host:port or mqtts://host:port, not {v!r}")
        return v

    def password_value(self) -> str | None:
        return secret_value(self.password, self.password_file)
