"""Config and files: check-config refuses what serve refuses, secrets are never echoed, the files
rackpulse creates are private, and what devices send cannot forge log lines or ping a channel."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
from pathlib import Path

import pytest

from app.agent.outbox import Outbox
from app.alerting.channels import Channel, render
from app.credentials import hash_password
from app.logsafe import OneLineFormatter
from app.storage.db import make_engine, upgrade
from tests.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]


def rackpulse(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env={"RACKPULSE_PASSWORD_HASH": ""})


def check(tmp_path: Path, toml: str) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "rackpulse.toml"
    cfg.write_text(toml)
    return rackpulse("check-config", "--config", str(cfg))


def test_check_config_refuses_a_listen_beyond_loopback_without_a_password(tmp_path: Path) -> None:
    r = check(tmp_path, '[web]\nlisten = "0.0.0.0"\n')
    assert r.returncode != 0 and "is not loopback, so a login is required" in r.stderr
    ok = check(tmp_path, f'[web]\nlisten = "0.0.0.0"\npassword_hash = "{hash_password("x", n=2**10)}"\n')
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize("toml, words", [
    ('[web]\npassword_hash = "hunter2-plain-text"\n', "is not a hash made by `rackpulse hash-password`"),
    ('[web]\napi_token_hash = "tok-plain-text"\n', "is not a hash made by `rackpulse make-token`"),
    ('[web]\ntls_cert_file = "/etc/ssl/cert.pem"\n', "set both web.tls_cert_file and web.tls_key_file"),
])
def test_check_config_applies_every_rule_serve_applies(tmp_path: Path, toml: str, words: str) -> None:
    r = check(tmp_path, toml)
    assert r.returncode != 0 and words in r.stderr
    assert "hunter2" not in r.stderr + r.stdout and "tok-plain" not in r.stderr + r.stdout


SECRET = "s3cr3t-V4LUE"


@pytest.mark.parametrize("toml", [
    f'[web]\npassword_hash = ["{SECRET}"]\n',
    f'[web]\napi_token_hash = ["{SECRET}"]\n',
    f'[[collectors.snmp.targets]]\nname = "sw"\nhost = "10.0.0.2"\ncommunity = ["{SECRET}"]\n',
    f'[[collectors.snmp.targets]]\nname = "sw"\nhost = "10.0.0.2"\nversion = "3"\nauth_password = {{ a = "{SECRET}" }}\n',
    f'[[alerts.channels]]\nname = "n"\nurl = "ftp://{SECRET}@ntfy.example/x"\n',
    f'[[alerts.channels]]\nname = "n"\nurl = "https://h.example/x"\nheaders = "Bearer {SECRET}"\n',
])
def test_a_config_error_names_the_key_of_a_secret_but_never_its_value(tmp_path: Path, toml: str) -> None:
    r = check(tmp_path, toml)
    assert r.returncode != 0 and "value not shown: it is a secret" in r.stderr
    assert SECRET not in r.stderr + r.stdout


# The error sits on a parent of the secret (a table written with one bracket, a string where a
# list of tables belongs): the parent's input holds the secret and was printed whole.
@pytest.mark.parametrize("toml", [
    f'[alerts.channels]\nname = "slack"\nurl = "https://hooks.slack.com/services/T0/B0/{SECRET}"\n',
    f'[alerts]\nchannels = "https://hooks.slack.com/services/T0/B0/{SECRET}"\n',
    f'[collectors.snmp.targets]\nname = "sw"\nhost = "10.0.0.2"\ncommunity = "{SECRET}"\n',
    f'[collectors.nut.upsd]\nhost = "127.0.0.1"\nusername = "mon"\npassword = "{SECRET}"\n',
    f'[[export.mqtt]]\nurl = "mqtt://u:{SECRET}@broker"\n',
    f'[export.remote_write]\nurl = "https://mimir.example/api/v1/push"\nheaders = {{ Authorization = "Bearer {SECRET}" }}\n',
    f'[[export.remote_write]]\nurl = "https://mimir.example/api/v1/push"\nbasic_auth = "rackpulse:{SECRET}"\n',
    f'[[export.remote_write]]\nurl = "https://u:{SECRET}@mimir.example/api/v1/push"\ninterval = "often"\n',
    f'[[export.remote_write]]\nurl = "https://mimir.example/api/v1/push"\nheaders = ["Authorization: Bearer {SECRET}"]\n',
    f'[[alerts.channels]]\nname = "x"\nkind = "nope"\nurl = "https://ntfy.example/{SECRET}"\n',
    f'[alerts.channels.x]\nurl = "https://ntfy.example/{SECRET}"\n',
])
def test_a_config_error_on_a_parent_of_a_secret_never_prints_the_secret(tmp_path: Path, toml: str) -> None:
    r = check(tmp_path, toml)
    assert r.returncode != 0, r.stdout
    assert SECRET not in r.stderr + r.stdout, r.stderr
    assert "key '" in r.stderr or "not valid TOML" in r.stderr or "unknown key" in r.stderr


def test_credentials_in_urls_are_redacted_from_every_log_line() -> None:
    fmt = OneLineFormatter("%(levelname)s %(message)s")
    rec = logging.LogRecord("rackpulse.export", logging.WARNING, __file__, 1, "remote write to %s failed (%s)",
                            (f"https://rackpulse:{SECRET}@mimir.example/api/v1/push",
                             f"GET http://h/x?token={SECRET}&a=1 refused"), None)
    line = fmt.format(rec)
    assert SECRET not in line
    assert "https://rackpulse:***@mimir.example/api/v1/push" in line and "?token=***&a=1" in line
    try:
        raise OSError(f"cannot reach https://u:{SECRET}@h/")
    except OSError:
        import sys

        rec = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    assert SECRET not in fmt.format(rec)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_database_its_wal_and_the_agent_outbox_are_readable_by_their_owner_only(tmp_path: Path) -> None:
    old = os.umask(0o022)  # a usual umask would give 0644
    try:
        url = f"sqlite:///{tmp_path / 'db' / 'rackpulse.db'}"
        upgrade(url)
        engine = make_engine(url)
        with engine.begin() as c:
            c.exec_driver_sql("CREATE TABLE t (x)")
        box = Outbox(tmp_path / "outbox.db", 1 << 20)
        files = [tmp_path / "db" / "rackpulse.db", tmp_path / "db" / "rackpulse.db-wal", tmp_path / "outbox.db"]
        assert {f.name: mode(f) for f in files if f.exists()} == {f.name: 0o600 for f in files}
        box.close()
        engine.dispose()
    finally:
        os.umask(old)


def test_the_systemd_units_create_private_files() -> None:
    for unit in ("rackpulse.service", "rackpulse-agent.service"):
        assert "\nUMask=0027\n" in (ROOT / "deploy" / "systemd" / unit).read_text()


def test_a_newline_from_a_device_cannot_forge_a_second_log_line() -> None:
    record = logging.LogRecord("rackpulse.x", logging.WARNING, __file__, 1, "peer %s down",
                               ("10.0.0.1\n2026-11-23 00:00:00 INFO rackpulse: all good\x1b[2J",), None)
    line = OneLineFormatter("%(levelname)s %(message)s").format(record)
    assert line == "WARNING peer 10.0.0.1\\n2026-11-23 00:00:00 INFO rackpulse: all good\\x1b[2J down"


EVENT = {"id": 1, "kind": "firing", "rule": "bgp_peer_down", "subject": "p", "severity": "critical",
         "summary": "BGP peer @everyone <!channel> *down* [click](http://evil.example)", "labels": {"host": "nas"},
         "ts": 1.0, "duration": None, "since": 1.0}


def test_slack_text_cannot_ping_the_channel_or_forge_a_link() -> None:
    import json

    text = json.loads(render(Channel("s", "https://x", "slack"), EVENT)[0])["text"]
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text


def test_discord_text_cannot_mention_everyone_or_use_markdown() -> None:
    import json

    doc = json.loads(render(Channel("d", "https://x", "discord"), EVENT)[0])
    assert doc["allowed_mentions"] == {"parse": []}
    assert "@everyone" not in doc["content"] and "\\*down\\*" in doc["content"] and "\\[click\\]" in doc["content"]
