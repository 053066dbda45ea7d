"""The audit log in words: what someone did and what came of it, the request small beside them."""

from __future__ import annotations

import pytest

from app.people.audit_words import ACTIONS, action_words, answer_words


@pytest.mark.parametrize("action, said", [
    ("POST /alerts/ack", "acknowledged an alert"),
    ("POST /alerts/silence", "silenced alerts"),
    ("POST /alerts/silence/12/expire", "ended a silence"),
    ("POST /h/ceph1/alerts/ack", "acknowledged an alert"),
    ("POST /disks/ZA1049HK/selftest", "started a disk self-test"),
    ("POST /disks/WD-WX/31A/notes", "changed a disk's notes"),  # a serial with a slash in it
    ("POST /disks/ZA1049HK/bay", "labelled a bay"),
    ("POST /monitors/3/delete", "deleted a monitor"),
    ("POST /monitors/add", "added a monitor"),
    ("POST /channels/7/edit", "changed a notification channel"),
    ("POST /collectors/smart/run", "ran a collector now"),
    ("POST /account/totp/confirm", "turned on a second factor"),
    ("POST /account/tokens/ansible/revoke", "revoked an API token"),
    ("POST /users/viewer1", "changed a user"),
    ("POST /users", "added a user"),
    ("login", "signed in"), ("login refused", "was refused at sign-in"),
    ("POST /something/new?x=1", "changed /something/new"),
    ("DELETE /silences/4", "ended a silence"),
    ("DELETE /nothing/known", "deleted /nothing/known"),
    ("a route's own words", "a route's own words"),
])
def test_each_change_is_said_in_words(action: str, said: str) -> None:
    assert action_words(action) == said


def test_every_route_named_is_said_by_its_own_words_not_an_earlier_ones() -> None:
    for route, words in ACTIONS:
        path = route.replace("{key...}", "ZA1/x").replace("{page}", "disks")
        path = "/".join("7" if p.startswith("{") else p for p in path.split("/"))
        assert action_words(f"POST {path}") == words, route


@pytest.mark.parametrize("status, said", [
    (None, "–"), (200, "done"), (303, "done"), (400, "refused: the input was not valid"),
    (403, "refused: not allowed"), (404, "not found"), (429, "refused: too many tries"),
    (418, "refused (418)"), (500, "failed: the server could not do it"), (503, "failed: the server could not do it"),
])
def test_each_answer_is_said_in_words(status: int | None, said: str) -> None:
    assert answer_words(status) == said
