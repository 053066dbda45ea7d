"""What every SNMP read shares: a target as it is configured (a switch for the snmp collector, a
UPS network card for nut), its credentials for pysnmp, and pysnmp's errors in words. Only GET and
GETBULK are ever sent."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr

from collectors.base import CollectorError
from collectors.config import Seconds, Strict


class SnmpTarget(Strict):
    """One SNMP agent: [[collectors.snmp.targets]] and [[collectors.nut.snmp]] share these keys."""

    name: str
    host: str
    port: Annotated[int, Field(ge=1, le=65535)] = 161
    version: Literal["2c", "3"] = "2c"
    # Secrets: inline, or (better) in a file readable only by rackpulse.
    community: SecretStr | None = None
    community_file: Path | None = None
    user: str | None = None
    auth_protocol: Literal["MD5", "SHA", "SHA-224", "SHA-256", "SHA-384", "SHA-512", "none"] = "SHA"
    auth_password: SecretStr | None = None
    auth_password_file: Path | None = None
    priv_protocol: Literal["AES", "AES-192", "AES-256", "DES", "none"] = "AES"
    priv_password: SecretStr | None = None
    priv_password_file: Path | None = None
    timeout: Seconds = 2.0
    retries: Annotated[int, Field(ge=0, le=5)] = 1

    def secret(self, key: str) -> str | None:
        """The inline value, else the file's first line; read at each poll so a rotated secret is
        picked up without a restart."""
        inline = getattr(self, key)
        path = getattr(self, f"{key}_file")
        if inline:
            return str(inline.get_secret_value())
        if path:
            return Path(path).read_text().strip() or None
        return None

    def __repr__(self) -> str:  # never show secrets in logs or errors
        return f"SnmpTarget({self.name!r}, {self.host}:{self.port}, v{self.version})"


def auth_data(target: SnmpTarget) -> Any:
    from pysnmp.hlapi.v3arch import asyncio as h

    if target.version == "2c":
        community = target.secret("community")
        if not community:
            raise CollectorError(f"{target.name}: SNMP v2c needs a community")
        return h.CommunityData(community, mpModel=1)
    auth = {"MD5": h.usmHMACMD5AuthProtocol, "SHA": h.usmHMACSHAAuthProtocol,
            "SHA-224": h.usmHMAC128SHA224AuthProtocol, "SHA-256": h.usmHMAC192SHA256AuthProtocol,
            "SHA-384": h.usmHMAC256SHA384AuthProtocol, "SHA-512": h.usmHMAC384SHA512AuthProtocol,
            "none": h.usmNoAuthProtocol}[target.auth_protocol]
    priv = {"AES": h.usmAesCfb128Protocol, "AES-192": h.usmAesCfb192Protocol, "AES-256": h.usmAesCfb256Protocol,
            "DES": h.usmDESPrivProtocol, "none": h.usmNoPrivProtocol}[target.priv_protocol]
    if not target.user:
        raise CollectorError(f"{target.name}: SNMP v3 needs a user")
    return h.UsmUserData(target.user, target.secret("auth_password"), target.secret("priv_password"),
                         authProtocol=auth, privProtocol=priv)


def explain(target: SnmpTarget, indication: object) -> str:
    """pysnmp's error indications in words a user can act on."""
    name = type(indication).__name__ if not isinstance(indication, str) else indication
    text = str(indication)
    where = f"{target.name} ({target.host}:{target.port})"
    # pysnmp's indications by class, or by their text ("No SNMP response received before
    # timeout", "Wrong SNMP PDU digest", "Unknown USM user", "Unsupported SNMP security level").
    if "RequestTimedOut" in name or "timed out" in text.lower() or "before timeout" in text.lower():
        hint = "wrong community, " if target.version == "2c" else ""
        return f"{where}: no response within {target.timeout:g}s x {target.retries + 1} ({hint}wrong address, or agent down)"
    if "WrongDigest" in name or "digest" in text.lower():
        return f"{where}: SNMPv3 authentication failed (wrong auth password or protocol for user {target.user!r})"
    if "UnknownUserName" in name or "unknown user" in text.lower() or "unknown usm user" in text.lower():
        return f"{where}: unknown SNMPv3 user {target.user!r}"
    if "UnsupportedSecLevel" in name or "security level" in text.lower():
        return f"{where}: user {target.user!r} does not support this security level (auth/priv settings)"
    if "Ciphering services not available" in text:
        return f"{where}: SNMPv3 privacy needs the 'cryptography' package"
    return f"{where}: {text}"
