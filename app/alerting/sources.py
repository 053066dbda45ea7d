"""Which collector raises an alert: its collector_down explains the alert, and its sources that
cannot be read hold it. Most rules are one plug-in's; a rule several plug-ins share (backup_stale,
raised by restic and by borg) belongs to the plug-in named first in its alert's subject
("borg/offsite/nas:/srv"), so that borg's repository going away never holds restic's alerts."""

from __future__ import annotations

from collections.abc import Mapping

from collectors import plugins


class RuleSources(dict[str, str]):
    """rule -> the plug-in whose findings raise it, for the rules of one plug-in; `of` answers for
    the shared ones too."""

    def __init__(self) -> None:
        by_rule: dict[str, list[str]] = {}
        for name, p in plugins().items():
            for r in p.rules:
                by_rule.setdefault(r.name, []).append(name)
        super().__init__({rule: names[0] for rule, names in by_rule.items() if len(names) == 1})
        self.shared = {rule: tuple(names) for rule, names in by_rule.items() if len(names) > 1}

    def of(self, rule: str, subject: str) -> str | None:
        names = self.shared.get(rule)
        if names is None:
            return self.get(rule)
        head = subject.split("/", 1)[0]
        return head if head in names else None


def source_of(sources: Mapping[str, str], rule: str, subject: str) -> str | None:
    """The plug-in that raises the alert (rule, subject); a plain mapping knows one per rule."""
    return sources.of(rule, subject) if isinstance(sources, RuleSources) else sources.get(rule)
