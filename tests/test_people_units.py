"""People and access piece by piece, on a migrated SQLite file: names, roles and passwords
refused with the rule said; the last admin kept; tokens' scopes capped by their owner, expiry,
revocation, last use written at most once a minute, and each token's own rate; two-factor steps
never reused; the audit log kept 400 days; password hashes that refuse anything malformed.
The routes that use them are tested through the web in tests/security/test_people.py."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pyotp
import pytest
from sqlalchemy import Engine, select

from app import credentials
from app.people import audit
from app.people.api_tokens import LAST_USE_WRITES, PREFIX, Token, Tokens, parse_duration
from app.people.users import (
    CACHE_SECONDS,
    OPEN,
    Principal,
    User,
    UserError,
    Users,
    check_name,
    check_password,
    check_role,
    code_hash,
    dummy_hash,
)
from app.storage.db import make_engine, upgrade
from app.storage.models import api_token, web_user

T0 = 1_700_000_000.0
FAST = 2**4  # scrypt's work factor in tests: the format, not the cost, is under test


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Engine]:
    url = f"sqlite:///{tmp_path / 'rackpulse.db'}"
    upgrade(url)
    real = credentials.hash_password
    monkeypatch.setattr(credentials, "hash_password", lambda pw, n=FAST, r=8, p=1: real(pw, n=FAST, r=r, p=p))
    e = make_engine(url)
    yield e
    e.dispose()


# -- names, roles, passwords ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["a", "alice", "Bob.Smith", "ops_1", "me@home", "x-y", "9lives", "a" * 100])
def test_a_name_of_letters_digits_and_four_signs_is_taken_as_it_is(name: str) -> None:
    assert check_name(name) == name


@pytest.mark.parametrize("name", ["", ".alice", "-x", "_x", "@x", "a b", "ali/ce", "a" * 101, "é", "a\n", None])
def test_a_name_with_anything_else_is_refused_saying_what_is_allowed(name: str) -> None:
    with pytest.raises(UserError, match=r"letters, digits and \. _ @ - \(at most 100, not starting with a sign\)"):
        check_name(name)  # type: ignore[arg-type]


def test_a_role_is_admin_or_viewer_and_anything_else_names_both() -> None:
    assert check_role("admin") == "admin" and check_role("viewer") == "viewer"
    with pytest.raises(UserError, match=r"^role 'operator': one of admin, viewer$"):
        check_role("operator")


def test_a_password_needs_eight_characters() -> None:
    assert check_password("12345678") == "12345678"
    with pytest.raises(UserError, match="^use at least 8 characters$"):
        check_password("1234567")


def test_who_is_asking_is_named_in_the_audit_by_how_they_came() -> None:
    assert Principal("alice", "admin", "session").actor == "alice"
    assert OPEN.actor == "local" and OPEN.role == "admin" and OPEN.may_change
    assert Principal("ansible", "operator", "token", 3).actor == "token:ansible"
    assert Principal("bob", "viewer", "proxy").actor == "proxy:bob"
    assert Principal("x", "viewer", "link").actor == "link:x"
    assert [Principal("p", r, "session").may_change for r in ("admin", "operator", "viewer")] == [True, True, False]


# -- users ----------------------------------------------------------------------------------

def test_a_user_is_added_with_a_hashed_password_and_read_back(engine: Engine) -> None:
    users = Users(engine)
    assert not users.any()
    users.add("alice", "admin", "correct horse", now=T0)
    u = users.get("alice")
    assert u is not None and (u.name, u.role, u.epoch, u.created) == ("alice", "admin", 0, T0)
    assert u.password_hash.startswith("scrypt$") and "correct horse" not in u.password_hash
    assert not u.two_factor and u.recovery == () and u.recovery_json == "[]"
    assert users.any() and users.admins() == 1
    assert users.get("bob") is None


def test_adding_a_name_twice_says_how_to_change_the_password_instead(engine: Engine) -> None:
    users = Users(engine)
    users.add("alice", "admin", "correct horse")
    with pytest.raises(UserError, match=r"^user 'alice' exists already \(`rackpulse users passwd alice` changes"):
        users.add("alice", "viewer", "another one")
    assert users.get("alice").role == "admin"  # type: ignore[union-attr]


@pytest.mark.parametrize(("name", "role", "password", "says"), [
    ("bad name", "admin", "correct horse", "letters, digits"),
    ("alice", "root", "correct horse", "role 'root'"),
    ("alice", "admin", "short", "at least 8"),
])
def test_an_add_with_one_bad_part_adds_nothing(engine: Engine, name: str, role: str, password: str, says: str) -> None:
    users = Users(engine)
    with pytest.raises(UserError, match=says):
        users.add(name, role, password)
    assert users.all() == []


def test_users_are_listed_by_name_and_admins_counted(engine: Engine) -> None:
    users = Users(engine)
    for name, role in (("carol", "viewer"), ("alice", "admin"), ("bob", "admin")):
        users.add(name, role, "correct horse")
    assert [u.name for u in users.all()] == ["alice", "bob", "carol"]
    assert users.admins() == 2


def test_the_right_password_gives_the_user_and_a_wrong_one_or_unknown_name_none(engine: Engine) -> None:
    users = Users(engine)
    users.add("alice", "admin", "correct horse")
    assert users.verify("alice", "correct horse") == users.get("alice")
    assert users.verify("alice", "wrong horse") is None
    assert users.verify("nobody", "correct horse") is None
    # an unknown name is checked against a real hash all the same, the same one every time
    assert dummy_hash().startswith("scrypt$") and dummy_hash() == dummy_hash()


def test_a_change_made_elsewhere_is_seen_once_the_cache_is_told_or_has_aged(engine: Engine,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    users, other = Users(engine), Users(engine)
    assert users.get("alice") is None  # read, and cached
    other.add("alice", "admin", "correct horse")  # another process, as the command line is
    assert users.get("alice") is None  # within CACHE_SECONDS the cache answers
    import app.people.users as module
    clock = module.time.monotonic() + CACHE_SECONDS + 0.01
    monkeypatch.setattr(module.time, "monotonic", lambda: clock)
    assert users.get("alice") is not None
    other.remove("alice", other_login=True)  # as the command line does: it is itself a way back in
    users.changed()
    assert users.get("alice") is None


def test_a_new_password_counts_an_epoch_and_revokes_the_users_tokens(engine: Engine) -> None:
    users, tokens = Users(engine), Tokens(engine)
    users.add("alice", "admin", "correct horse")
    users.add("bob", "admin", "correct horse")
    mine, his = tokens.create("ci", "write", owner="alice"), tokens.create("ci", "write", owner="bob")
    users.set_password("alice", "battery staple")
    assert users.get("alice").epoch == 1  # type: ignore[union-attr]
    assert users.verify("alice", "battery staple") and not users.verify("alice", "correct horse")
    assert tokens.check(mine) is None and tokens.check(his) is not None
    with pytest.raises(UserError, match="at least 8"):
        users.set_password("alice", "short")
    with pytest.raises(UserError, match="^no user 'zed'$"):
        users.set_password("zed", "battery staple")


def test_ending_sessions_counts_an_epoch_and_keeps_the_tokens(engine: Engine) -> None:
    users, tokens = Users(engine), Tokens(engine)
    users.add("alice", "viewer", "correct horse")
    tok = tokens.create("dash", "read", owner="alice")
    users.end_sessions("alice")
    users.end_sessions("alice")
    assert users.get("alice").epoch == 2  # type: ignore[union-attr]
    assert tokens.check(tok) is not None
    with pytest.raises(UserError, match="no user 'zed'"):
        users.end_sessions("zed")


def test_the_last_admin_cannot_be_demoted_but_one_of_two_can(engine: Engine) -> None:
    users = Users(engine)
    users.add("alice", "admin", "correct horse")
    with pytest.raises(UserError, match="^alice is the last admin: make another admin first$"):
        users.set_role("alice", "viewer")
    users.set_role("alice", "admin")  # staying admin is no demotion
    users.add("bob", "admin", "correct horse")
    users.set_role("alice", "viewer")
    assert users.get("alice").role == "viewer" and users.admins() == 1  # type: ignore[union-attr]
    with pytest.raises(UserError, match="role 'boss'"):
        users.set_role("bob", "boss")


def test_a_demotion_revokes_the_users_tokens_and_a_promotion_keeps_them(engine: Engine) -> None:
    users, tokens = Users(engine), Tokens(engine)
    users.add("root", "admin", "correct horse")
    users.add("alice", "viewer", "correct horse")
    users.add("bob", "admin", "correct horse")
    a, b = tokens.create("t", "read", owner="alice"), tokens.create("t", "admin", owner="bob")
    users.set_role("alice", "admin")
    assert tokens.check(a) is not None and users.get("alice").epoch == 1  # type: ignore[union-attr]
    users.set_role("bob", "viewer")
    assert tokens.check(b) is None
    assert tokens.check(a) is not None


def test_the_last_admin_is_removed_only_where_another_way_in_remains(engine: Engine) -> None:
    users = Users(engine)
    users.add("alice", "admin", "correct horse")
    users.add("bob", "viewer", "correct horse")
    with pytest.raises(UserError, match="^alice is the last admin: make another admin first$"):
        users.remove("alice")
    users.remove("bob")  # a viewer, any time
    users.remove("alice", other_login=True)  # the config's password, or the command line
    assert users.all() == []


def test_a_removed_user_is_gone_with_their_tokens(engine: Engine) -> None:
    users, tokens = Users(engine), Tokens(engine)
    users.add("alice", "viewer", "correct horse")
    tok = tokens.create("t", "read", owner="alice")
    users.remove("alice")
    assert users.get("alice") is None and tokens.check(tok) is None
    with pytest.raises(UserError, match="^no user 'alice'$"):
        users.remove("alice")


# -- two-factor -----------------------------------------------------------------------------

def enrolled(users: Users, name: str = "alice") -> tuple[str, list[str]]:
    users.add(name, "admin", "correct horse")
    secret = users.start_totp(name)
    assert users.get(name).totp_pending == secret and not users.get(name).two_factor  # type: ignore[union-attr]
    codes = users.confirm_totp(name, pyotp.TOTP(secret).at(T0), now=T0)
    assert codes is not None
    return secret, codes


def test_two_factor_is_in_force_only_once_a_code_from_the_new_secret_is_confirmed(engine: Engine) -> None:
    users = Users(engine)
    users.add("alice", "admin", "correct horse")
    secret = users.start_totp("alice")
    assert users.confirm_totp("alice", "000000" if pyotp.TOTP(secret).at(T0) != "000000" else "111111",
                              now=T0) is None
    assert not users.get("alice").two_factor  # type: ignore[union-attr]
    assert users.confirm_totp("nobody", "123456", now=T0) is None
    codes = users.confirm_totp("alice", pyotp.TOTP(secret).at(T0), now=T0)
    u = users.get("alice")
    assert u is not None and u.two_factor and u.totp_secret == secret and u.totp_pending is None
    assert u.totp_last_step == int(T0 // 30)
    assert codes is not None and len(codes) == 10 and len(set(codes)) == 10
    assert all(len(c) == 13 and c[6] == "-" for c in codes)
    assert list(u.recovery) == [code_hash(c) for c in codes]  # stored hashed, never as shown
    assert users.confirm_totp("alice", pyotp.TOTP(secret).at(T0), now=T0) is None  # nothing pending now


def test_a_code_is_taken_once_and_its_neighbour_steps_for_a_clock_a_little_off(engine: Engine) -> None:
    users = Users(engine)
    secret, _ = enrolled(users)
    totp = pyotp.TOTP(secret)
    later = T0 + 300
    assert users.second_factor("alice", totp.at(later - 30), now=later)  # the step before: a slow clock
    assert not users.second_factor("alice", totp.at(later - 30), now=later)  # used: never again
    assert not users.second_factor("alice", totp.at(later - 60), now=later)  # older: never
    assert users.second_factor("alice", totp.at(later + 30), now=later)  # the step after: a fast clock
    assert not users.second_factor("alice", totp.at(later), now=later)  # older than the last accepted
    assert not users.second_factor("alice", totp.at(later + 600), now=later)  # far off: refused


def test_a_recovery_code_works_once_typed_any_way_from_paper(engine: Engine) -> None:
    users = Users(engine)
    _, codes = enrolled(users)
    first = codes[0]
    assert users.second_factor("alice", " " + first.upper().replace("-", " ") + " ", now=T0)
    assert not users.second_factor("alice", first, now=T0)
    assert len(users.get("alice").recovery) == 9  # type: ignore[union-attr]
    assert not users.second_factor("alice", "abcdef-abcdef", now=T0)


def test_no_second_factor_without_two_factor_or_with_an_empty_code(engine: Engine) -> None:
    users = Users(engine)
    users.add("bob", "admin", "correct horse")
    assert not users.second_factor("bob", "123456", now=T0)
    assert not users.second_factor("nobody", "123456", now=T0)
    secret, _ = enrolled(users)
    assert not users.second_factor("alice", "   ", now=T0)
    users.disable_totp("alice")
    u = users.get("alice")
    assert u is not None and not u.two_factor and u.totp_pending is None and u.totp_last_step is None
    assert u.recovery == ()
    assert not users.second_factor("alice", pyotp.TOTP(secret).at(T0 + 60), now=T0 + 60)


def test_code_hash_ignores_spaces_dashes_and_case() -> None:
    assert code_hash("AB12-cd 34") == code_hash("ab12cd34") == __import__("hashlib").sha256(b"ab12cd34").hexdigest()


def test_a_user_row_without_recovery_codes_reads_as_none(engine: Engine) -> None:
    with engine.begin() as c:
        c.execute(web_user.insert().values(name="old", role="viewer", password_hash="x", epoch=0,
                                           recovery=None, created=T0))
    u = Users(engine).get("old")
    assert u == User("old", "viewer", "x", 0, None, None, None, (), T0)
    assert json.loads(u.recovery_json) == []


# -- tokens ---------------------------------------------------------------------------------

def test_a_token_is_shown_once_and_stored_as_its_hash(engine: Engine) -> None:
    tokens = Tokens(engine)
    tok = tokens.create("ci", "write", expires_in=3600, now=T0)
    assert tok.startswith(PREFIX) and len(tok) > 40
    with engine.connect() as c:
        row = c.execute(select(api_token)).one()
    assert row.token_hash == credentials.token_hash(tok) and tok not in row.token_hash
    [t] = tokens.list()
    assert (t.name, t.owner, t.scope, t.created, t.expires, t.revoked) == ("ci", None, "write", T0, T0 + 3600, None)


def test_a_token_without_expiry_never_expires(engine: Engine) -> None:
    tokens = Tokens(engine)
    tokens.create("ci", "read", now=T0)
    assert tokens.list()[0].expires is None


@pytest.mark.parametrize(("name", "scope", "says"), [("ci", "root", "^scope 'root': read, write or admin$"),
                                                     ("bad name", "read", "letters, digits")])
def test_a_token_with_a_bad_name_or_scope_is_not_made(engine: Engine, name: str, scope: str, says: str) -> None:
    tokens = Tokens(engine)
    with pytest.raises(UserError, match=says):
        tokens.create(name, scope)
    assert tokens.list() == []


def test_token_names_are_one_per_owner_and_one_for_the_command_line(engine: Engine) -> None:
    tokens = Tokens(engine)
    tokens.create("ci", "read")
    with pytest.raises(UserError, match="^a token named 'ci' exists already"):
        tokens.create("ci", "read")
    tokens.create("ci", "read", owner="alice")
    with pytest.raises(UserError, match="^you have a token named 'ci' already"):
        tokens.create("ci", "write", owner="alice")
    tokens.create("ci", "read", owner="bob")
    assert sorted(str(t.owner) for t in tokens.list()) == ["None", "alice", "bob"]
    assert [t.owner for t in tokens.list(owner="alice")] == ["alice"]


def test_a_token_is_checked_by_prefix_hash_revocation_and_expiry(engine: Engine) -> None:
    tokens = Tokens(engine)
    tok = tokens.create("ci", "read", expires_in=3600, now=T0)
    assert tokens.check(tok, now=T0 + 10) is not None
    assert tokens.check(tok, now=T0 + 3600) is None  # expiry is the first second it is gone
    assert tokens.check(tok[len(PREFIX):], now=T0) is None  # without its prefix it is not a token
    assert tokens.check(PREFIX + "x" * 43, now=T0) is None
    assert tokens.check(tok + "x", now=T0) is None


def test_a_token_says_its_state_revoked_before_expired() -> None:
    t = Token(1, "ci", None, "read", T0, T0 + 10, None, None, None)
    assert t.state(T0) == "active" and t.state(T0 + 9.9) == "active" and t.state(T0 + 10) == "expired"
    assert Token(1, "ci", None, "read", T0, T0 + 10, None, None, T0 + 5).state(T0 + 20) == "revoked"
    assert Token(1, "ci", None, "read", T0, None, None, None, None).state(T0 + 10**9) == "active"


@pytest.mark.parametrize(("scope", "owner", "owner_role", "role"), [
    ("read", None, None, "viewer"), ("write", None, None, "operator"), ("admin", None, None, "admin"),
    ("admin", "alice", "admin", "admin"), ("admin", "alice", "viewer", "viewer"),
    ("write", "alice", "viewer", "viewer"), ("read", "alice", "admin", "viewer"),
    ("write", "alice", "admin", "operator"), ("admin", "alice", None, "admin"), ("bogus", None, None, "viewer"),
])
def test_a_token_may_do_what_its_scope_gives_but_never_more_than_its_owner_now(
        scope: str, owner: str | None, owner_role: str | None, role: str) -> None:
    assert Token(1, "t", owner, scope, T0, None, None, None, None).role(owner_role) == role


def test_the_last_use_is_written_at_most_once_a_minute(engine: Engine) -> None:
    tokens = Tokens(engine)
    tok = tokens.create("ci", "read", now=T0)
    tokens.check(tok, "10.0.0.1", now=T0 + 1)
    tokens.check(tok, "10.0.0.2", now=T0 + 1 + LAST_USE_WRITES - 1)
    t = tokens.list()[0]
    assert (t.last_used, t.last_address) == (T0 + 1, "10.0.0.1")
    tokens.check(tok, "10.0.0.3", now=T0 + 1 + LAST_USE_WRITES)
    t = tokens.list()[0]
    assert (t.last_used, t.last_address) == (T0 + 1 + LAST_USE_WRITES, "10.0.0.3")


def test_revoking_by_name_takes_the_owners_token_or_the_command_lines(engine: Engine) -> None:
    tokens = Tokens(engine)
    cli, alices = tokens.create("ci", "read"), tokens.create("ci", "read", owner="alice")
    assert tokens.revoke("ci", owned=True, now=T0)  # the command line's only
    assert tokens.check(cli) is None and tokens.check(alices) is not None
    assert not tokens.revoke("ci", owned=True)  # already revoked
    assert not tokens.revoke("ci", owner="bob")
    assert tokens.revoke("ci", owner="alice", now=T0)
    assert tokens.check(alices) is None
    assert {t.revoked for t in tokens.list()} == {T0}


def test_revoking_without_an_owner_takes_anyones_token_of_that_name(engine: Engine) -> None:
    tokens = Tokens(engine)
    a, b = tokens.create("ci", "read", owner="alice"), tokens.create("ci", "read", owner="bob")
    assert tokens.revoke("ci")
    assert tokens.check(a) is None and tokens.check(b) is None


def test_removing_a_token_takes_only_that_owners(engine: Engine) -> None:
    tokens = Tokens(engine)
    tokens.create("ci", "read")
    tokens.create("ci", "read", owner="alice")
    assert tokens.remove("ci", owner="alice")
    assert [t.owner for t in tokens.list()] == [None]
    assert not tokens.remove("ci", owner="alice")
    assert tokens.remove("ci")
    assert tokens.list() == []


def test_each_token_has_its_own_bucket_of_requests(engine: Engine) -> None:
    tokens = Tokens(engine, per_second=2.0, burst=3)
    assert [tokens.allow(1, now=100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert tokens.allow(1, now=100.0) == pytest.approx(0.5)  # one more needs half a second at 2/s
    assert tokens.allow(2, now=100.0) == 0.0  # another token is not held back
    assert tokens.allow(1, now=100.5) == 0.0  # refilled by half a second
    assert tokens.allow(1, now=100.5) == pytest.approx(0.5)
    assert [tokens.allow(3, now=200.0 + i * 10) for i in range(5)] == [0.0] * 5  # never over the burst


def test_the_bucket_refills_to_the_burst_and_no_further(engine: Engine) -> None:
    tokens = Tokens(engine, per_second=1.0, burst=2)
    tokens.allow(1, now=1.0)
    assert [tokens.allow(1, now=1000.0) for _ in range(3)] == [0.0, 0.0, pytest.approx(1.0)]


@pytest.mark.parametrize(("text", "seconds"), [("90d", 90 * 86400), ("12h", 43200), ("30m", 1800), ("2w", 1209600),
                                               (" 1.5h ", 5400)])
def test_a_duration_is_a_number_and_a_unit(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["90", "d", "90s", "1y", "-1d", "", "1 d x"])
def test_a_duration_without_a_known_unit_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(UserError, match=r"a number and m, h, d or w \(90d\)"):
        parse_duration(text)


# -- audit ----------------------------------------------------------------------------------

def test_the_audit_log_lists_newest_first_by_actor_and_cuts_long_words(engine: Engine) -> None:
    audit.record(engine, "alice", "login", address="10.0.0.1", status=200, now=T0)
    audit.record(engine, "token:ci", "POST /alerts/ack", "x" * 3000, now=T0 + 1)
    audit.record(engine, "a" * 200, "b" * 300, "", now=T0 + 2)
    rows = audit.entries(engine)
    assert [r["ts"] for r in rows] == [T0 + 2, T0 + 1, T0]
    assert len(rows[0]["actor"]) == 120 and len(rows[0]["action"]) == 200 and rows[0]["detail"] is None
    assert len(rows[1]["detail"] or "") == 2000
    assert rows[2] == {"id": rows[2]["id"], "ts": T0, "actor": "alice", "action": "login", "detail": None,
                       "address": "10.0.0.1", "status": 200}
    assert [r["actor"] for r in audit.entries(engine, actor="alice")] == ["alice"]
    assert len(audit.entries(engine, limit=2)) == 2


def test_the_audit_log_forgets_only_what_is_older_than_400_days(engine: Engine) -> None:
    day = 86400
    for age in (401, 400.01, 399.9, 1):
        audit.record(engine, "alice", f"{age}", now=T0 - age * day)
    assert audit.forget_old(engine, now=T0) == 2
    assert sorted(r["action"] for r in audit.entries(engine)) == ["1", "399.9"]


def test_a_note_goes_to_the_requests_audit_row() -> None:
    class State:
        pass

    class Request:
        state = State()

    req = Request()
    audit.note(req, "ack md0")  # type: ignore[arg-type]
    assert req.state.audit_detail == "ack md0"  # type: ignore[attr-defined]


# -- password hashes and the config's token -------------------------------------------------

def test_a_password_hash_names_its_parameters_and_verifies_only_its_password() -> None:
    h = credentials.hash_password("correct horse", n=FAST, r=4, p=2)
    scheme, n, r, p, salt, digest = h.split("$")
    assert (scheme, n, r, p) == ("scrypt", str(FAST), "4", "2")
    assert len(base64.b64decode(salt)) == 16 and len(base64.b64decode(digest)) == 32
    assert credentials.verify_password("correct horse", h)
    assert not credentials.verify_password("correct hors", h)
    assert credentials.hash_password("correct horse", n=FAST) != credentials.hash_password("correct horse", n=FAST)


def test_the_default_hash_costs_what_the_docs_say() -> None:
    assert credentials.hash_password("correct horse").startswith("scrypt$16384$8$1$")


@pytest.mark.parametrize("encoded", ["", "scrypt$16$8$1", "bcrypt$16$8$1$c2FsdA==$ZGlnZXN0", "scrypt$x$8$1$c2FsdA==$ZA==",
                                     "scrypt$16$8$1$!!!$ZA==", "scrypt$16$8$1$c2FsdA==$ZA==$extra"])
def test_a_malformed_or_foreign_hash_verifies_nothing_and_raises_nothing(encoded: str) -> None:
    assert credentials.verify_password("anything", encoded) is False


def test_a_hash_with_another_scheme_is_refused_even_when_its_digest_would_match() -> None:
    good = credentials.hash_password("pw", n=FAST)
    assert not credentials.verify_password("pw", "notscrypt" + good[len("scrypt"):])


@pytest.mark.parametrize(("listen", "loopback"), [("127.0.0.1", True), ("127.1.2.3", True), ("::1", True),
                                                  ("localhost", True), ("0.0.0.0", False), ("192.168.1.2", False),
                                                  ("::", False), ("1.127.0.0", False)])
def test_loopback_is_what_only_this_machine_reaches(listen: str, loopback: bool) -> None:
    assert credentials.is_loopback(listen) is loopback


def test_the_configs_token_is_random_and_checked_by_its_hash_as_a_bearer() -> None:
    token, h = credentials.make_token()
    assert len(token) == 32 and "=" not in token and h == credentials.token_hash(token)
    assert h.startswith("sha256$") and len(h) == len("sha256$") + 64
    assert credentials.make_token()[0] != token
    assert credentials.check_token(f"Bearer {token}", h)
    assert credentials.check_token(f"Bearer  {token} ", h)
    assert not credentials.check_token(token, h)  # no scheme
    assert not credentials.check_token(f"Basic {token}", h)
    assert not credentials.check_token(f"Bearer {token}x", h)
    assert not credentials.check_token(None, h) and not credentials.check_token("", h)
    assert not credentials.check_token(f"Bearer {token}", None) and not credentials.check_token(f"Bearer {token}", "")
