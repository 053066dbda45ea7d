"""The HAProxy `rackpulse init` finds: /etc/haproxy/haproxy.cfg's `stats socket` lines (its global
section), each an instance of the starter config's [collectors.haproxy]; a configuration without
one is said, with the line to add."""

from __future__ import annotations

from collectors.starter import HostTree, q

CONFIG = "/etc/haproxy/haproxy.cfg"


def sockets(text: str) -> list[tuple[str, str]]:
    """(path, level) of each `stats socket` line; a line that binds an address (ipv4@…) is skipped."""
    out = []
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) >= 3 and words[:2] == ["stats", "socket"] and words[2].startswith("/"):
            level = words[words.index("level") + 1] if "level" in words[:-1] else "user"
            out.append((words[2], level))
    return out


def starter(tree: HostTree) -> list[str]:
    text = tree.read(CONFIG)
    if text is None:
        return []
    found = sockets(text)
    out = ["[collectors.haproxy]"]
    if not found:
        return [*out, f"## {CONFIG} has no stats socket: add `stats socket /run/haproxy/admin.sock mode 660 "
                      "group rackpulse level user` to its global section, then an instance here"]
    for i, (path, level) in enumerate(found):
        out += ["[[collectors.haproxy.instances]]", f"name = {q('haproxy' if i == 0 else f'haproxy-{i + 1}')}",
                f"socket = {q(path)}  # level {level}: rackpulse sends only show stat and show info"]
    return out
