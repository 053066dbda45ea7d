"""The command line and the config file, run as a user would run them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import ConfigError, load_config
from app.demo import story as demo
from tests.cli import run_cli

ROOT = Path(__file__).parent.parent


def rackpulse(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env)


def test_the_example_config_is_valid_and_equals_the_defaults() -> None:
    cfg = load_config(ROOT / "rackpulse.example.toml")
    assert cfg.collectors.smart.nocheck == "standby" and cfg.web.listen == "127.0.0.1"


def test_the_example_config_documents_every_built_in_collector() -> None:
    from collectors import plugins

    text = (ROOT / "rackpulse.example.toml").read_text()
    assert [n for n in plugins() if f"[collectors.{n}]" not in text] == []


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[collectors.mdraid]\nintervall = 5\n', "unknown key 'collectors.mdraid.intervall'"),
        ('[collectors.smart]\ninterval = "soon"\n', "key 'collectors.smart.interval': input should be a valid number"),
        ('[collectors.smart]\nnocheck = "always"\n', "key 'collectors.smart.nocheck'"),
        ('[collectors.mdraid]\nmdadm = []\n', "key 'collectors.mdraid.mdadm'"),
        ('[web]\nport = 99999\n', "key 'web.port'"),
        ('[web\n', "not valid TOML"),
    ],
)
def test_a_wrong_key_or_type_names_the_file_the_key_and_what_was_expected(tmp_path: Path, toml: str,
                                                                          message: str) -> None:
    f = tmp_path / "bad.toml"
    f.write_text(toml)
    with pytest.raises(ConfigError) as err:
        load_config(f)
    assert str(f) in str(err.value) and message in str(err.value)


def test_check_config_exits_2_with_the_error(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text("[collectors.mdraid]\nintervall = 5\n")
    r = rackpulse("check-config", "--config", str(f))
    assert r.returncode == 2 and "unknown key 'collectors.mdraid.intervall'" in r.stderr


@pytest.mark.parametrize(("toml", "hot", "said"), [
    ("[collectors.smart]\ntemperature_warning = 45\n", 45.0, "it is used while alerts.disk_hot_celsius is not set"),
    ("[alerts]\ndisk_hot_celsius = 55\n[collectors.smart]\ntemperature_warning = 45\n", 55.0,
     "alerts.disk_hot_celsius is set and wins"),
    ("[alerts]\ndisk_hot_celsius = 55\n", 55.0, None),
])
def test_a_plug_in_key_that_moved_still_works_and_check_config_says_where_it_lives_now(
        tmp_path: Path, toml: str, hot: float, said: str | None) -> None:
    f = tmp_path / "old.toml"
    f.write_text(toml)
    assert load_config(f).disk_hot_celsius() == hot
    r = rackpulse("check-config", "--config", str(f))
    assert r.returncode == 0
    if said is None:
        assert "deprecated" not in r.stderr
    else:
        assert "warning: collectors.smart.temperature_warning is deprecated: alerts.disk_hot_celsius is the one " \
               "setting for it; " + said in r.stderr


def test_the_config_is_found_through_the_environment(tmp_path: Path) -> None:
    f = tmp_path / "env.toml"
    f.write_text('host = "from-env"\n')
    r = rackpulse("check-config", env={"RACKPULSE_CONFIG": str(f)})
    assert r.returncode == 0 and "'from-env'" in r.stdout


def _demo_toml(tmp_path: Path, t: float) -> Path:
    demo.write_tree(tmp_path, demo.story_state(t))
    cfg = demo.demo_config(tmp_path, f"sqlite:///{tmp_path / 'x.db'}", 1, 1)
    lines = [f'host = "{cfg["host"]}"', f'host_root = "{cfg["host_root"]}"']
    for name, c in cfg["collectors"].items():
        if name not in ("mdraid", "smart", "frr", "bonding", "zfs", "megaraid", "ceph"):
            continue  # simulated peers plug in only inside `rackpulse demo`; lists of tables need TOML arrays
        lines.append(f"[collectors.{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in c.items()]
    for b in cfg["disks"]["bays"]:
        lines += ["[[disks.bays]]", *(f"{k} = {json.dumps(v)}" for k, v in b.items())]
    f = tmp_path / "rackpulse.toml"
    f.write_text("\n".join(lines) + "\n")
    return f


def test_collect_once_prints_a_line_a_collector_saying_what_it_saw(tmp_path: Path) -> None:
    r = rackpulse("collect", "--once", "--config", str(_demo_toml(tmp_path, 80)))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("host demo-nas: ") and "collectors" in lines[0]
    (md,) = [line for line in lines if line.split()[1:2] == ["mdraid"]]
    assert md.split()[0] == "problem" and "md0 degraded" in md
    assert any(line.split()[:2] == ["ok", "hwmon"] or line.split()[1:2] == ["hwmon"] for line in lines)
    assert lines[-1] == "every state in full: rackpulse collect --once --json"
    assert len(r.stdout) < 4000 and "{" not in r.stdout  # a summary, not the dump


def test_collect_once_prints_what_it_saw_as_json(tmp_path: Path) -> None:
    r = rackpulse("collect", "--once", "--json", "--config", str(_demo_toml(tmp_path, 80)))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    md0 = out["collectors"]["mdraid"]["state"]["arrays"][0]
    assert md0["degraded"] and [m["bay"] for m in md0["members"] if m["state"] == "failed"] == ["shelf 1, bay 7"]


def test_collect_once_prints_prometheus_text(tmp_path: Path) -> None:
    r = rackpulse("collect", "--once", "--format", "prometheus", "--config", str(_demo_toml(tmp_path, 80)))
    assert r.returncode == 0
    assert 'rackpulse_md_array_degraded{host="demo-nas",array="md0"} 1' in r.stdout


def test_collect_once_exits_1_when_a_collector_fails(tmp_path: Path) -> None:
    f = _demo_toml(tmp_path, 0)
    (tmp_path / "proc" / "mdstat").write_bytes(b"\x00\x01 garbage")
    r = rackpulse("collect", "--once", "--format", "json", "--config", str(f))
    assert r.returncode == 1
    assert "collector mdraid failed" in r.stderr and "NUL" in r.stderr
    assert json.loads(r.stdout)["collectors"]["smart"]["up"] is True
    r = rackpulse("collect", "--once", "--config", str(f))
    first = r.stdout.splitlines()[1].split()
    assert r.returncode == 1 and first[:2] == ["FAILED", "mdraid"]  # the failed ones first


def test_db_upgrade_creates_the_schema(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(f'[storage]\nurl = "sqlite:///{tmp_path / "new.db"}"\n')
    r = rackpulse("db", "upgrade", "--config", str(f))
    assert r.returncode == 0 and (tmp_path / "new.db").exists()


def test_serve_refuses_to_listen_beyond_loopback_without_a_password(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text('[web]\nlisten = "0.0.0.0"\n')
    r = rackpulse("serve", "--config", str(f))
    assert r.returncode == 2 and "login is required" in r.stderr


def test_hash_password_reads_stdin_and_never_echoes_it() -> None:
    r = subprocess.run([sys.executable, "-m", "app.cli", "hash-password"], input="s3cret-pass\n", text=True,
                       capture_output=True, cwd=ROOT, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("scrypt$") and "s3cret-pass" not in r.stdout


def test_version_prints_the_installed_version() -> None:
    from importlib.metadata import version

    r = rackpulse("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"rackpulse {version('rackpulse')}"


def test_a_wrong_log_level_is_refused_with_the_levels_it_takes() -> None:
    r = rackpulse("--log-level", "loud", "check-config")
    assert r.returncode == 2
    assert "argument --log-level: invalid choice: 'LOUD' (choose from 'DEBUG', 'INFO', 'WARNING'" in r.stderr
    assert rackpulse("--log-level", "warning", "--version").returncode == 0  # any case


def test_every_option_of_every_command_has_help_text() -> None:
    import argparse

    from app.cli import build_parser

    parser = build_parser()
    missing = []
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in [("rackpulse", parser), *sub.choices.items()]:
        for action in p._actions:
            if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction) and not action.help:
                missing.append(f"{name} {action.dest}")
    assert missing == []
    assert all(a.help for a in sub._choices_actions)  # every command says what it does


def test_listing_agents_creates_no_database(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(f'[storage]\nurl = "sqlite:///{tmp_path / "never.db"}"\n')
    r = rackpulse("agents", "list", "--config", str(f))
    assert r.returncode == 0 and "does not exist yet" in r.stderr
    assert list(tmp_path.iterdir()) == [f]


def test_users_add_without_a_config_refuses_instead_of_making_a_database_here(tmp_path: Path) -> None:
    r = run_cli("users", "add", "viewer1", cwd=tmp_path, env={"RACKPULSE_CONFIG": ""}, stdin="a-long-password\n")
    assert r.returncode == 2 and "no config" in r.stderr and "--config" in r.stderr
    assert "added" not in r.stdout and not (tmp_path / "rackpulse.db").exists()
    # with a config (or the database already there, as beside a running demo) it goes ahead
    db = tmp_path / "r.db"
    (tmp_path / "rackpulse.toml").write_text(f'[storage]\nurl = "sqlite:///{db}"\n')
    r = run_cli("users", "add", "viewer1", cwd=tmp_path, env={"RACKPULSE_CONFIG": ""}, stdin="a-long-password\n")
    assert r.returncode == 0 and db.exists()


def test_the_server_asks_glibc_for_two_malloc_arenas_unless_malloc_arena_max_says_otherwise(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from app.cli.serve import few_malloc_arenas

    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert few_malloc_arenas() is True  # this machine's C library is glibc
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert few_malloc_arenas() is False  # the user's own setting stands
