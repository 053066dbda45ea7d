"""An acknowledgement that arrives while the scheduler is evaluating is kept.

The web thread acknowledges while the scheduler thread evaluates. A CI run of the browser
test caught the old code losing the ack: the evaluation swapped in states computed from
before it, so the page offered "Acknowledge" again and reminders would have gone on."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from app.alerting.service import Alerting
from app.storage.db import make_engine, upgrade
from tests.alerting.test_delivery import RULE, bad


class HeldAlerting(Alerting):
    """Stops between computing the new states and storing them, until the test lets it go."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.entered, self.go, self.hold = threading.Event(), threading.Event(), False

    def _store(self, *args: Any) -> Any:
        if self.hold:
            self.entered.set()
            assert self.go.wait(10)
        return super()._store(*args)


def test_an_ack_sent_during_an_evaluation_is_not_undone_by_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    a = HeldAlerting(make_engine(url), "nas", {}, [RULE])
    t0 = 1_790_000_000.0
    a.tick(bad("disk"), now=t0)
    key = next(k for k in a.states if k[0] == "bad")
    assert a.states[key].state == "firing"

    a.hold = True
    evaluation = threading.Thread(target=a.tick, args=(bad("disk"),), kwargs={"now": t0 + 10})
    evaluation.start()
    assert a.entered.wait(10)
    acked: list[bool] = []
    person = threading.Thread(target=lambda: acked.append(a.ack(*key, now=t0 + 11)))
    person.start()
    person.join(0.5)  # the ack either waits for the evaluation or (the old bug) runs inside it
    a.go.set()
    evaluation.join(10)
    person.join(10)

    assert acked == [True]
    assert a.states[key].acked_at == t0 + 11
    reloaded = Alerting(make_engine(url), "nas", {}, [RULE])
    assert reloaded.states[key].acked_at == t0 + 11
    assert [s.acked_at for s in reloaded.view(now=t0 + 12).active] == [t0 + 11]
