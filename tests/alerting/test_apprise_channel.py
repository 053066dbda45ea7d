"""Apprise channels at their edges: a URL Apprise cannot use is a config error that names the
channel and never the URL; a service that hangs costs one retry within the channel's timeout;
what a failure says is blanked of every part of the URL; the subject says what to do."""

from __future__ import annotations

import socket
import time

import pytest

from app.alerting.apprise_channel import blank, body, title, url_problem
from app.alerting.apprise_channel import notify as apprise_notify
from app.alerting.channels import Channel, DeliveryError
from app.config import ConfigError, load_config

EV = {"id": 1, "kind": "firing", "rule": "array_degraded", "subject": "md0", "severity": "critical",
      "summary": "md0 degraded (11/12): shelf 1, bay 7, WDC WD80EFZZ-68BTXN0 serial ZA1049HK, was sdh1",
      "labels": {"host": "nas", "array": "md0", "bay": "shelf 1, bay 7", "serial": "ZA1049HK",
                 "model": "WDC WD80EFZZ-68BTXN0", "device": "sdh1"}, "ts": 1_795_000_000.0, "duration": None}


def test_the_subject_says_the_level_the_rules_title_the_thing_and_what_to_do() -> None:
    assert title(EV) == "[rackpulse] CRITICAL RAID array degraded md0: pull shelf 1, bay 7"
    assert title({**EV, "kind": "reminder"}).startswith("[rackpulse] STILL FIRING RAID array degraded md0: pull")
    assert title({**EV, "kind": "resolved", "duration": 3720}) == "[rackpulse] RESOLVED RAID array degraded md0 after 1 h 2 min"
    hot = {**EV, "rule": "disk_hot", "severity": "warning", "subject": "ZA1049HK"}
    assert title(hot) == "[rackpulse] WARNING Disk running hot ZA1049HK: look at shelf 1, bay 7"
    no_bay = {**EV, "rule": "vpn_down", "subject": "site-b", "summary": "VPN site-b down", "labels": {}}
    assert title(no_bay) == "[rackpulse] CRITICAL VPN down site-b: VPN site-b down"


def test_the_body_has_the_words_the_facts_and_a_link_all_escaped() -> None:
    page = body({**EV, "summary": "md0 <degraded> & more"}, "https://rackpulse.lan/")
    assert "<strong>md0 &lt;degraded&gt; &amp; more</strong>" in page
    assert '<th align="left">Serial</th><td>ZA1049HK</td>' in page
    assert '<a href="https://rackpulse.lan/alerts">' in page


@pytest.mark.parametrize("url", ["mailx://u:secretpw@mail.example", "no-scheme-secretpw", "tgram://"])
def test_a_url_apprise_cannot_use_is_a_config_error_naming_the_channel_not_the_url(url: str) -> None:
    assert url_problem(url)
    with pytest.raises(ConfigError) as err:
        load_config(None, {"alerts": {"channels": [{"name": "pager", "format": "apprise", "url": url}]}})
    said = str(err.value)
    assert "pager" in said and "secretpw" not in said
    assert url not in said or url == "tgram://"  # a bare scheme is no secret


def test_a_webhook_channel_still_takes_only_http_urls() -> None:
    with pytest.raises(ConfigError, match="http:// or https://"):
        load_config(None, {"alerts": {"channels": [{"name": "hook", "url": "file:///etc/passwd"}]}})
    assert url_problem("mailtos://user:pw@smtp.example.org?to=a@b.example") is None


def test_what_a_failure_says_is_blanked_of_every_part_of_the_url() -> None:
    url = "mailtos://alice:s3cr3t-pw@smtp.example.org:465?to=ops%40corp.example&from=nas%40corp.example"
    said = blank(f"login failed for alice with s3cr3t-pw at smtp.example.org:465 to ops@corp.example ({url})", url)
    for secret in ("alice", "s3cr3t-pw", "smtp.example.org", "ops@corp.example", url):
        assert secret not in said


def test_a_service_that_never_answers_costs_the_channels_timeout_and_a_retry() -> None:
    with socket.socket() as silent:  # accepts, then says nothing: an SMTP server that hangs
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        ch = Channel("mail", f"mailto://127.0.0.1:{port}?from=a@nas.example&to=b@mail.example", "apprise", timeout=1.0)
        t0 = time.monotonic()
        with pytest.raises(DeliveryError) as err:
            apprise_notify(ch, "subject", "<p>body</p>")
        took = time.monotonic() - t0
    assert took < 3.0 and "did not answer within 1 s" in str(err.value)
    assert "b@mail.example" not in str(err.value)


@pytest.mark.parametrize(("fmt", "url"), [("webhook", "https://hooks.example:99999/secretpw"),
                                          ("webhook", "http://hooks.example:0/secretpw"),
                                          ("webhook", "http://hooks.example:-1/secretpw"),
                                          ("apprise", "json://hooks.example:65536/secretpw")])
def test_a_channel_url_with_a_port_outside_1_to_65535_is_refused_without_repeating_the_url(fmt: str, url: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(None, {"alerts": {"channels": [{"name": "pager", "format": fmt, "url": url}]}})
    said = str(err.value)
    assert "pager" in said and "port is not a number from 1 to 65535" in said and "secretpw" not in said
    ok = load_config(None, {"alerts": {"channels": [{"name": "pager", "url": "https://hooks.example:65535/x"}]}})
    assert ok.alerts.channels[0].name == "pager"
