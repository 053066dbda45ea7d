"""Sessions, CSRF, the throttle and the proxies' client address, as units over a real SQLite
database (the session secret lives in its meta table): a cookie is valid until its expiry and
only with its signature, a logout ends that one session, "everywhere" ends the admin's and not a
user's, a new password ends all; the throttle waits past `limit` attempts a window per address
and twice that per account; X-Forwarded-For is believed only past trusted proxies."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from app.storage.db import make_engine, upgrade
from app.web.proxies import Proxies
from app.web.sessions import SESSION_SECONDS, Sessions, Throttle

NOW = 1_800_000_000.0


@pytest.fixture
def url(tmp_path: Path) -> str:
    u = f"sqlite:///{tmp_path / 'r.db'}"
    upgrade(u)
    return u


def sessions(url: str, password_hash: str | None = "hash-1") -> Sessions:
    return Sessions(make_engine(url), password_hash)


def signed(s: Sessions, *, expires: object = None, generation: object = 0, user: str = "61", epoch: object = 0) -> str:
    """A cookie this server signed, its parts as given: the session id, when it ends (a minute
    from NOW unless said), the generation, the user's name in hex and the password epoch."""
    body = f"{'ab' * 16}.{int(NOW + 60) if expires is None else expires}.{generation}.{user}.{epoch}"
    return f"{body}.{s._sign(body)}"


def test_a_session_is_valid_until_its_expiry_and_names_its_user_and_epoch(url: str) -> None:
    s = sessions(url)
    token = s.make(NOW, user="anna", epoch=3)
    sid, user, epoch = s.who(token, NOW + SESSION_SECONDS)  # type: ignore[misc]
    assert (user, epoch, len(sid)) == ("anna", 3, 32)
    assert s.check(token, NOW + SESSION_SECONDS) == sid
    assert s.who(token, NOW + SESSION_SECONDS + 1) is None


@pytest.mark.parametrize("change", [
    lambda t: t[:-1] + ("0" if t[-1] != "0" else "1"),  # another signature
    lambda t: t.replace(".", "..", 1),  # a part too many
    lambda t: ".".join(t.split(".")[:5]),  # a part too few
    lambda t: "x" + t,  # another session id: the signature no longer fits
    lambda t: ".".join([t.split(".")[0], "99x", *t.split(".")[2:]]),  # a non-number expiry
    lambda t: ".".join([*t.split(".")[:4], "-1", t.split(".")[5]]),  # a non-number epoch
    lambda t: "",
])
def test_a_cookie_changed_in_any_part_is_no_session(url: str, change: object) -> None:
    s = sessions(url)
    token = s.make(NOW, user="anna")
    assert callable(change)
    assert s.who(change(token), NOW) is None


def test_another_servers_secret_or_another_password_does_not_sign_the_same(tmp_path: Path, url: str) -> None:
    token = sessions(url).make(NOW)
    other = f"sqlite:///{tmp_path / 'other.db'}"
    upgrade(other)
    assert sessions(other).check(token, NOW) is None
    assert sessions(url, "hash-2").check(token, NOW) is None  # a new password ends every session
    assert sessions(url).check(token, NOW) is not None  # the same secret, read again after a restart


def test_a_logout_ends_that_session_only_and_is_remembered_across_a_restart(url: str) -> None:
    s = sessions(url)
    a, b = s.make(NOW), s.make(NOW)
    s.logout(a, NOW)
    assert s.check(a, NOW) is None and s.check(b, NOW) is not None
    again = sessions(url)
    assert again.check(a, NOW) is None and again.check(b, NOW) is not None
    s.logout("nonsense", NOW)  # nothing to end: nothing happens
    s.logout(None, NOW)


def test_a_logout_forgets_the_sessions_that_expired_anyway(url: str) -> None:
    s = sessions(url)
    old = s.make(NOW - SESSION_SECONDS + 10)
    s.logout(old, NOW)
    later = NOW + 100
    fresh = s.make(later)
    s.logout(fresh, later)
    assert list(s._revoked) == [fresh.split(".")[0]]


def test_logging_out_everywhere_ends_the_admins_sessions_and_not_a_users(url: str) -> None:
    s = sessions(url)
    admin, user = s.make(NOW), s.make(NOW, user="anna", epoch=1)
    s.logout_everywhere()
    assert s.check(admin, NOW) is None
    assert s.check(user, NOW) is not None
    assert s.check(s.make(NOW), NOW) is not None  # a new sign-in works
    assert sessions(url).check(admin, NOW) is None  # the generation is stored


def test_a_user_name_that_is_not_hex_is_no_session(url: str) -> None:
    s = sessions(url)
    assert s.who(signed(s, user="zz"), NOW) is None
    assert s.who(signed(s, user="ff"), NOW) is None  # hex, but not UTF-8


def test_a_csrf_token_is_bound_to_its_identity(url: str) -> None:
    s = sessions(url)
    token = s.csrf("session-1")
    assert s.csrf_ok("session-1", token)
    assert not s.csrf_ok("session-2", token)
    assert not s.csrf_ok(None, token) and not s.csrf_ok("session-1", None) and not s.csrf_ok("", "")
    assert sessions(url).csrf_ok("session-1", token)  # valid across a restart


def test_without_a_password_sessions_still_sign(url: str) -> None:
    s = sessions(url, None)
    assert s.check(s.make(NOW), NOW) is not None


# -- the throttle ------------------------------------------------------------------------------------


def test_past_the_limit_within_the_window_an_address_waits_until_its_oldest_attempt_leaves() -> None:
    t = Throttle(limit=3, window=60.0)
    assert [t.attempt("1.2.3.4", now=100.0 + i) for i in range(3)] == [0, 0, 0]
    assert t.attempt("1.2.3.4", now=110.0) == 51  # the first leaves the window at 160
    assert t.retry_after("1.2.3.4", now=110.0) == 51
    assert t.retry_after("5.6.7.8", now=110.0) == 0
    assert t.attempt("1.2.3.4", now=160.5) == 0  # the first has left


def test_an_account_waits_past_twice_the_limit_from_any_address() -> None:
    t = Throttle(limit=2, window=60.0)
    for i in range(4):
        assert t.attempt(f"10.0.0.{i}", account="anna", now=100.0) == 0
    assert t.attempt("10.0.0.9", account="anna", now=101.0) == 60
    assert t.retry_after("10.0.0.9", now=101.0, account="anna") == 60
    assert t.attempt("10.0.0.9", account="bob", now=101.0) == 0


def test_a_success_takes_its_own_attempt_back_and_forgets_the_accounts_failures() -> None:
    t = Throttle(limit=2, window=60.0)
    t.attempt("a", account="anna", now=100.0)
    t.attempt("a", account="anna", now=101.0)
    t.succeeded("a", account="anna")
    assert t.retry_after("a", now=102.0, account="anna") == 0
    t.attempt("a", now=103.0)
    assert t.retry_after("a", now=103.0) == 58


def test_a_failure_counted_after_the_fact_counts_and_the_wait_is_at_least_a_second() -> None:
    t = Throttle(limit=1, window=1.0)
    t.failed("a", now=100.0)
    assert t.retry_after("a", now=100.9) == 1
    assert t.retry_after("a", now=101.1) == 0


def test_many_addresses_are_forgotten_once_nothing_of_theirs_is_recent() -> None:
    t = Throttle(limit=1, window=10.0)
    for i in range(10_002):
        t.failed(f"a{i}", now=1.0)
    t.failed("late", now=100.0)
    assert set(t._failures) == {"late"}


# -- proxies ---------------------------------------------------------------------------------------


def test_the_client_is_the_peer_unless_the_peer_is_a_trusted_proxy() -> None:
    p = Proxies(["10.0.0.0/8", "::1"], "X-Remote-User")
    assert p.client("192.168.1.5", "1.1.1.1") == "192.168.1.5"
    assert p.client("10.0.0.2", None) == "10.0.0.2"
    assert p.client("10.0.0.2", "1.1.1.1, 10.0.0.3") == "1.1.1.1"
    assert p.client("10.0.0.2", "6.6.6.6, 1.1.1.1") == "1.1.1.1"  # left of the first untrusted hop: made up
    assert p.client("10.0.0.2", "not-an-address") == "10.0.0.2"
    assert p.client("10.0.0.2", "10.0.0.7, 10.0.0.3") == "10.0.0.7"  # a chain of trusted proxies only
    assert p.client("10.0.0.2", "junk, 10.0.0.3") == "10.0.0.2"
    assert p.client("10.0.0.2", " , ") == "10.0.0.2"
    assert p.client("::1", "2001:db8::1") == "2001:db8::1"


def test_trusted_reads_networks_and_refuses_what_is_no_address() -> None:
    p = Proxies(["10.1.2.3/8"], "X")  # not strict: the host bits are dropped
    assert p.trusted("10.200.0.1") and not p.trusted("11.0.0.1") and not p.trusted("localhost")
    assert not Proxies([], "X").trusted("127.0.0.1")


def test_an_ignored_proxy_login_is_logged_once_per_address_per_ten_minutes(caplog: pytest.LogCaptureFixture) -> None:
    p = Proxies([], "X-Remote-User")
    with caplog.at_level(logging.WARNING, logger="rackpulse.web"):
        p.ignored("1.2.3.4", "anna")
        p.ignored("1.2.3.4", "anna")
        p.ignored("5.6.7.8", "x" * 100)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "proxy login header X-Remote-User (user 'anna') from 1.2.3.4 ignored: not in web.trusted_proxies"
    assert len(lines) == 2 and f"(user {'x' * 60!r})" in lines[1]


# -- the edges make mutation found unpinned ------------------------------------------------------------


def test_the_throttles_defaults_are_ten_attempts_a_minute() -> None:
    t = Throttle()
    assert (t.limit, t.window) == (10, 60.0)


def test_an_attempt_exactly_a_window_after_the_first_still_waits_a_second() -> None:
    t = Throttle(limit=1, window=60.0)
    assert t.attempt("a", now=100.0) == 0
    assert t.attempt("a", now=160.0) == 1
    assert t.attempt("a", now=160.5) == 0


def test_a_busy_throttle_keeps_what_is_recent_up_to_exactly_its_window_and_bounds_each_queue() -> None:
    t = Throttle(limit=2, window=10.0)
    for i in range(10_001):
        t.failed(f"a{i}", now=1.0)
    t.failed("edge", now=90.0)
    t.failed("recent", now=95.0)
    t.failed("late", now=100.0)
    assert set(t._failures) == {"edge", "recent", "late"}
    for _ in range(50):
        t.failed("late", now=100.0)
    assert len(t._failures["late"]) == 8  # limit * 4: the most a wait is worked out from


def test_a_fresh_databases_sessions_carry_generation_and_epoch_zero(url: str) -> None:
    token = sessions(url).make(NOW)
    assert token.split(".")[2] == "0" and token.split(".")[4] == "0"
    assert sessions(url).who(token, NOW)[2] == 0  # type: ignore[index]


def test_check_and_logout_judge_at_the_time_given(url: str) -> None:
    s = sessions(url)
    old = s.make(1000.0)  # long expired by the wall clock
    assert s.check(old, 1000.0 + SESSION_SECONDS + 1) is None
    assert s.check(old, 1010.0) is not None
    s.logout(old, 1010.0)
    assert s.check(old, 1010.0) is None
    assert s._revoked == {old.split(".")[0]: int(old.split(".")[1])}


def test_each_logout_everywhere_ends_the_sessions_made_before_it_and_starts_afresh(url: str) -> None:
    s = sessions(url)
    s.logout(s.make(NOW), NOW)
    s.logout_everywhere()
    between = s.make(NOW)
    s.logout_everywhere()
    assert s.check(between, NOW) is None
    again = sessions(url)
    again.load()
    assert (again._generation, again._revoked) == (2, {})


@pytest.mark.parametrize("parts", [("x", "0"), ("0", "x")])
def test_a_signed_cookie_with_a_part_that_is_no_number_is_no_session(url: str, parts: tuple[str, str]) -> None:
    s = sessions(url)
    generation, epoch = parts
    assert s.who(signed(s, generation=generation, epoch=epoch), NOW) is None
    assert s.who(signed(s, expires="soon"), NOW) is None


def test_no_password_and_an_empty_one_sign_alike(url: str) -> None:
    assert sessions(url, "").check(sessions(url, None).make(NOW), NOW) is not None


def test_a_single_trusted_hop_is_the_client() -> None:
    assert Proxies(["10.0.0.0/8"], "X").client("10.0.0.2", "10.0.0.7") == "10.0.0.7"


def test_an_ignored_proxy_login_is_logged_again_after_exactly_ten_minutes(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    import app.web.proxies as proxies

    clock = {"t": 0.0}
    monkeypatch.setattr(proxies.time, "monotonic", lambda: clock["t"])
    p = Proxies([], "X")
    with caplog.at_level(logging.WARNING, logger="rackpulse.web"):
        for t in (0.0, 599.0, 600.0):
            clock["t"] = t
            p.ignored("1.2.3.4", "anna")
    assert len(caplog.records) == 2
