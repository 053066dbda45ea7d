"""The one-line changes a review found the suite let through (issue "Nine behaviours no test pins", and issue 63's ten),
applied one at a time to a scratch copy of the repository, each judged by the tests that pin it.
Prints each change as caught (a test turned red) or survived, and the count: every one must be
caught. Quick (about a minute): unlike `make mutation` (mutmut over whole packages), it checks
exactly these changes, so a later edit that weakens one of the tests shows here.

    .venv/bin/python scripts/pinned_mutants.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (file, the line as it is, the changed line, the test that must turn red)
MUTANTS: list[tuple[str, str, str, str]] = [
    ("app/web/guard.py", "admin = bool(web.proxy_admin_group) and web.proxy_admin_group in groups",
     "admin = web.proxy_admin_group in groups",
     "tests/security/test_people.py::test_with_no_admin_group_configured_a_proxy_user_without_groups_is_a_viewer"),
    ("collectors/network/wireguard/collector.py", "stale = watched and (age is None or age > self.cfg.stale_after)",
     "stale = watched and (age is not None and age > self.cfg.stale_after)",
     "tests/collectors/network/wireguard/test_wireguard.py::test_an_expected_peer_that_never_handshook_is_stale_not_fresh"),
    ("collectors/home/heatpump/ledger.py",
     "return self._cop(self.heat_heating + self.backup_heating, self.electricity_heating + self.backup_heating)",
     "return self._cop(self.heat_heating + self.backup_heating, self.electricity_heating)",
     "tests/collectors/home/heatpump/test_efficiency.py::"
     "test_a_booster_heavy_days_heating_cop_counts_the_boosters_electricity_and_does_not_flatter"),
    ("collectors/network/frr/prefixes.py", "if last is None or last[0] != established:", "if last is None:",
     "tests/collectors/network/frr/test_prefixes_and_bfd.py::"
     "test_a_session_that_flapped_between_two_polls_is_a_new_session_not_a_drop_of_prefixes"),
    ("collectors/network/modems/collector.py",
     'has_sim=info.sim is not None and info.failed_reason != "sim-missing"', "has_sim=info.sim is not None",
     "tests/collectors/network/modems/test_modems.py::"
     "test_a_dual_slot_modem_whose_active_slot_is_empty_says_no_sim_and_is_not_judged_on_signal"),
    ("app/storage/size.py", 'limit = min(keep_from, folded_up_to) if tier.name == "raw samples" else keep_from',
     "limit = keep_from",
     "tests/test_storage_size.py::test_raw_samples_the_5_minute_fold_has_not_taken_yet_are_never_trimmed"),
    ("app/runtime/alerts.py", "a.states = a._load()", "pass",
     "tests/test_leader_takeover.py::"
     "test_the_new_leader_neither_fires_again_nor_forgets_to_resolve_what_the_old_one_told"),
    ("collectors/disks/mdraid/mdstat.py", "return self.missing > 0\n", "return self.missing > 0 and self.sync is None\n",
     "tests/collectors/disks/mdraid/test_mdraid_collector.py::"
     "test_a_raid6_rebuilding_two_disks_is_still_degraded_until_the_rebuild_ends"),
    ("collectors/disks/mdraid/collector.py", 'gone.sort(key=lambda k: k.state != "failed")',
     'gone.sort(key=lambda k: k.state == "failed")',
     "tests/collectors/disks/mdraid/test_mdraid_collector.py::"
     "test_with_two_disks_out_of_sight_the_gap_is_named_by_the_one_that_failed"),
    # Issue 63: the ten one-line changes to issue 61's round that survived the whole suite.
    ("app/energy/bill.py", "first.replace(year=first.year - 1, month=12) if first.month == 1",
     "first.replace(month=12) if first.month == 1",
     "tests/energy/test_bill_calendar.py::test_a_january_bill_books_december_as_last_month_and_nothing_older"),
    ("app/energy/bill.py", "length = calendar.monthrange(local.year, local.month)[1] * 86400", "length = 30 * 86400",
     "tests/energy/test_bill_calendar.py::test_the_projection_spreads_the_cost_so_far_over_the_days_the_month_has"),
    ("app/alerting/conditions.py",
     'if old.state != "firing" or key in present or source_of(sources, old.rule, old.subject) != st.name:',
     "if key in present or source_of(sources, old.rule, old.subject) != st.name:",
     "tests/alerting/test_held_units.py::test_a_pending_alert_is_not_held_it_was_never_confirmed"),
    ("app/alerting/conditions.py", 'f"{unheld(old.summary)} (held: {why} since {when})"',
     'f"{old.summary} (held: {why} since {when})"',
     "tests/alerting/test_held_units.py::test_the_held_mark_is_said_once_however_many_runs_the_source_stays_away"),
    ("collectors/host/pbs/findings.py",
     "max_age = state.snapshot_max_age if state.snapshot_max_age is not None else DEFAULT_MAX_AGE",
     "max_age = DEFAULT_MAX_AGE",
     "tests/collectors/host/proxmox/test_backup_judging.py::"
     "test_a_snapshot_older_than_the_configured_max_age_is_stale_even_inside_the_default"),
    ("collectors/host/proxmox/collector.py",
     "parse.task_failed(last) and (newest is None or (last.start or 0) > (newest.time or 0))",
     "parse.task_failed(last)",
     "tests/collectors/host/proxmox/test_backup_judging.py::"
     "test_a_failed_backup_task_older_than_the_newest_backup_is_behind_it_and_not_counted"),
    ("collectors/host/proxmox/parse.py", ' and not t.status.startswith("WARNINGS")', "",
     "tests/collectors/host/proxmox/test_backup_judging.py::test_a_vzdump_task_has_failed_only_when_it_ended_with_an_error"),
    ("app/reload.py", 'RESTART = ("host", "host_root", "storage", "web",', 'RESTART = ("host", "host_root", "web",',
     "tests/test_reload_units.py::test_a_section_only_a_restart_applies_is_named_and_kept_running"),
    ("app/reload.py", "if old.disks != new.disks or old.disk_hot_celsius()", "if old.disk_hot_celsius()",
     "tests/test_reload_units.py::test_a_change_of_the_bays_rebuilds_every_collector"),
    ("app/install/sudoers.py", "if plugin is None or not section.enabled:", "if plugin is None:",
     "tests/install/test_sudoers_render.py::test_a_disabled_collector_gets_no_grant_though_its_tool_is_installed"),
]


def main() -> int:
    caught = 0
    with tempfile.TemporaryDirectory(prefix="rackpulse-mutants-") as tmp:
        copy = Path(tmp) / "repo"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", ".git", "node_modules", "__pycache__",
                                                                  ".mypy_cache", ".ruff_cache", ".pytest_cache"))
        for path, line, changed, test in MUTANTS:
            target = copy / path
            original = target.read_text()
            if original.count(line) != 1:
                print(f"MISSING  {path}: the line {line.strip()!r} is not there once (the code moved: update this list)")
                continue
            target.write_text(original.replace(line, changed))
            try:
                run = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", test],
                                     cwd=copy, capture_output=True, text=True, timeout=600)
            finally:
                target.write_text(original)
            red = run.returncode == 1
            caught += red
            print(f"{'caught ' if red else 'SURVIVED'} {path}: {changed.strip()}\n         by {test.split('::')[-1]}"
                  + ("" if red or run.returncode == 0 else f" (pytest exit {run.returncode}: {run.stdout[-300:]})"))
    print(f"{caught} of {len(MUTANTS)} one-line changes caught")
    return 0 if caught == len(MUTANTS) else 1


if __name__ == "__main__":
    sys.exit(main())
