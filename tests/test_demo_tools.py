"""The demo's stand-ins (app/demo/tools.py) start tens of thousands of times in a demo and in this
suite, so they import nothing but what is built into the interpreter, and write their JSON
themselves: the same text json.dumps writes, checked here value by value."""

from __future__ import annotations

import json
import marshal
import subprocess
import sys
from pathlib import Path

import pytest

from app.demo import tools
from app.demo.story import Driver

ROOT = Path(__file__).resolve().parent.parent

VALUES = [
    None, True, False, 0, -7, 2**70, 1.5, -0.0, 1e300, 3.14159e-12, float("nan"), float("inf"), float("-inf"),
    "", "plain", 'quote " and back\\slash', "tab\tnew\nline\rform\fback\bspace", "\x00\x1f\x7f",
    "café ±5 °C", "emoji 🖴 beyond the first plane", "\u2028\u2029",
    [], {}, [1, "a", None, [2.5, {"k": False}]], {"nested": {"list": [1, 2], "empty": {}}},
    {7: "int key", 2.5: "float key", True: "bool key", None: "null key"}, (1, 2),
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_the_stand_ins_json_is_json_dumps_to_the_byte(value: object) -> None:
    assert tools._json(value) == json.dumps(value)


def test_a_value_json_cannot_write_is_refused_as_json_refuses_it() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        tools._json({"a": object()})


def test_a_stand_in_imports_only_what_the_interpreter_has_built_in(tmp_path: Path) -> None:
    Driver(tmp_path).tick()
    state = tmp_path / "demo-state.marshal"
    assert marshal.loads(state.read_bytes()) == json.loads((tmp_path / "demo-state.json").read_text())

    def imports(*argv: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
        r = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", *argv], capture_output=True, text=True,
                           timeout=60)
        return r, {line.rsplit("|", 1)[1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}

    _, bare = imports("-c", "pass")
    r, imported = imports(str(ROOT / "app" / "demo" / "tools.py"), "smartctl", str(state), "--scan")
    assert r.returncode == 0 and json.loads(r.stdout)["devices"]
    assert imported - bare == {"__future__"}  # and no json, re, enum or functools
