"""The audit log in words: "acknowledged an alert", "refused: not allowed", not "POST /alerts/ack"
and 403. The request stays beside the words, small, for whoever wants to look it up."""

from __future__ import annotations

import re

# What a change is, by the path it was sent to (the routes of app/web that write): the first that
# matches says it. "{x}" stands for one path segment, "{x...}" for the rest of the path.
ACTIONS: tuple[tuple[str, str], ...] = (
    ("/alerts/ack", "acknowledged an alert"),
    ("/alerts/silence/{id}/expire", "ended a silence"),
    ("/alerts/silence", "silenced alerts"),
    ("/silences/{id}", "ended a silence"),
    ("/silences", "silenced alerts"),
    ("/maintenance/{id}", "ended a maintenance window"),
    ("/maintenance", "started a maintenance window"),
    ("/alerts/channels/{name}/test", "sent a test notification"),
    ("/channels/{name}/test", "sent a test notification"),
    ("/channels/add", "added a notification channel"),
    ("/channels/{id}/edit", "changed a notification channel"),
    ("/channels/{id}/delete", "deleted a notification channel"),
    ("/monitors/add", "added a monitor"),
    ("/monitors/heartbeat/{name}/url", "made a heartbeat's ping address anew"),
    ("/monitors/{id}/edit", "changed a monitor"),
    ("/monitors/{id}/delete", "deleted a monitor"),
    ("/collectors/{name}/run", "ran a collector now"),
    ("/hosts/{host}/revoke", "revoked an agent's token"),
    ("/agents/{host}/token", "issued an agent's token"),
    ("/disks/{key...}/notes", "changed a disk's notes"),
    ("/disks/{key...}/selftest", "started a disk self-test"),
    ("/{page}/{key...}/bay", "labelled a bay"),
    ("/account/password", "changed their password"),
    ("/account/totp/start", "began setting up a second factor"),
    ("/account/totp/confirm", "turned on a second factor"),
    ("/account/totp/off", "turned off their second factor"),
    ("/account/tokens/{name}/revoke", "revoked an API token"),
    ("/account/tokens", "made an API token"),
    ("/users/{name}/role", "changed a user's role"),
    ("/users/{name}/password", "set a user's password"),
    ("/users/{name}/sessions", "signed a user out everywhere"),
    ("/users/{name}/two-factor", "turned off a user's second factor"),
    ("/users/{name}/remove", "removed a user"),
    ("/users/{name}", "changed a user"),
    ("/users", "added a user"),
    ("/logout", "signed out"),
    ("/login", "signed in"),
)
# What came of it, by the answer's status.
ANSWERS = {400: "refused: the input was not valid", 401: "refused: not signed in", 403: "refused: not allowed",
           404: "not found", 405: "refused: not a change this address takes", 409: "refused: it conflicts",
           413: "refused: too large", 422: "refused: the input was not valid", 429: "refused: too many tries"}
VERBS = {"POST": "changed", "PUT": "changed", "PATCH": "changed", "DELETE": "deleted"}
OWN = {"login": "signed in", "login refused": "was refused at sign-in", "logout": "signed out"}


def _pattern(route: str) -> re.Pattern[str]:
    parts = re.split(r"(\{[a-z]+(?:\.\.\.)?\})", route)
    out = "".join(".+" if p.endswith("...}") else "[^/]+" if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(out + "$")


_ACTIONS = tuple((_pattern(route), words) for route, words in ACTIONS)


def action_words(action: str) -> str:
    """What someone did, from the audit row's action ("POST /alerts/ack", "login refused")."""
    if action in OWN:
        return OWN[action]
    method, _, path = action.partition(" ")
    if not path.startswith("/"):
        return action
    path = path.split("?", 1)[0]
    if path.startswith("/h/") and path.count("/") >= 3:  # an agent host's page: /h/<host>/alerts/ack
        path = "/" + path.split("/", 3)[3]
    for pattern, words in _ACTIONS:
        if pattern.match(path):
            return words
    return f"{VERBS.get(method.upper(), method.lower())} {path}"


def answer_words(status: int | None) -> str:
    """What came of it, from the HTTP status it was answered with."""
    if status is None:
        return "–"
    if status < 400:
        return "done"
    if status >= 500:
        return "failed: the server could not do it"
    return ANSWERS.get(status, f"refused ({status})")
