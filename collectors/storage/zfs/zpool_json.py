"""`zpool status -j --json-int` (OpenZFS 2.3 and later): the same pools as the text, read
from the JSON the man page describes. Numbers come as strings without --json-int and as
integers with it; both are read."""

from __future__ import annotations

import time
from typing import Any

from collectors import finite
from collectors.base import ParseError
from collectors.storage.common import integer, json_shape, number
from collectors.storage.zfs.records import Pool, Scan, Vdev

_GROUP_KEYS = (("dedup", "dedup"), ("special", "special"), ("logs", "logs"), ("l2cache", "cache"),
               ("spares", "spares"))
# A vdev type that holds others; any other type is a device.
_INTERIOR = ("root", "mirror", "raidz", "draid", "replacing", "spare")


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "", "-") and not isinstance(value, dict | list | bool) else None


def _state(value: Any) -> str:
    state = str(value or "").upper()
    return "ONLINE" if state == "HEALTHY" else state


def _vdevs(pool: Pool, children: Any, group: str, depth: int, parent: str | None) -> None:
    if not isinstance(children, dict):
        return
    for key, v in children.items():
        if not isinstance(v, dict):
            raise ParseError(f"pool {pool.name}: vdev {key!r} is not an object: {str(v)[:80]!r}")
        kind = str(v.get("vdev_type", ""))
        nested = v.get("vdevs")
        vd = Vdev(
            name=str(v.get("name", key)), state=_state(v.get("state")), group=group, depth=depth, parent=parent,
            read_errors=integer(v.get("read_errors")) or 0, write_errors=integer(v.get("write_errors")) or 0,
            checksum_errors=integer(v.get("checksum_errors")) or 0,
            path=_text(v.get("path")), phys_path=_text(v.get("phys_path")),
            enclosure=_text(v.get("vdev_enc_sysfs_path")) or _text(v.get("enc_path")),
            leaf=not nested and not any(kind.startswith(t) for t in _INTERIOR),
        )
        notes = []
        if v.get("aux"):
            notes.append(str(v["aux"]))
        if str(v.get("resilvering", "")) not in ("", "0", "False", "false"):
            notes.append("(resilvering)")
        if str(v.get("not_present", "")) not in ("", "0"):
            notes.append("not present")
        vd.note = " ".join(notes)
        pool.vdevs.append(vd)
        _vdevs(pool, nested, group, depth + 1, vd.name)


def _scan(s: Any, now: float) -> Scan | None:
    if not isinstance(s, dict) or not s.get("function"):
        return None
    function = str(s["function"]).lower()
    state = {"SCANNING": "scanning", "FINISHED": "finished", "CANCELED": "canceled"}.get(str(s.get("state")).upper(),
                                                                                        str(s.get("state")).lower())
    pause = s.get("scrub_pause")
    if state == "scanning" and pause not in (None, "-", "0", 0, "None"):
        state = "paused"
    scan = Scan(function=function, state=state, errors=integer(s.get("errors")))
    total = number(s.get("to_examine")) or 0
    issued = number(s.get("issued"))
    skipped = number(s.get("skipped")) or 0
    if state == "finished":
        scan.ratio = 1.0
    elif total > 0 and issued is not None:
        scan.ratio = min(issued / max(total - skipped, 1), 1.0)
        # zpool's own estimate: what is left at this pass's average issue rate.
        rate_bytes = number(s.get("issued_bytes_per_scan"))
        start = number(s.get("pass_start"))
        paused = number(s.get("scrub_spent_paused")) or 0
        if rate_bytes and start and start > 1e9:
            elapsed = max(now - start - paused, 1)
            rate = rate_bytes / elapsed
            if rate > 0:
                scan.remaining_seconds = max(total - skipped - issued, 0) / rate
    processed = number(s.get("processed"))
    scan.repaired = processed if function == "resilver" or state == "finished" else None
    when = s.get("end_time") if state == "finished" else s.get("start_time")
    if isinstance(when, int | float) and when > 0:
        when = time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(when))
    scan.when = str(when) if when not in (None, "", "-") else None
    pct = f" {scan.ratio * 100:.2f}% done" if scan.ratio is not None and state != "finished" else ""
    words = "in progress" if state == "scanning" else state
    scan.text = f"{function} {words}{pct}" + (f" with {scan.errors} errors" if scan.errors is not None else "")
    return scan


@json_shape("zpool status -j")
def parse_zpool_status_json(text: str, now: float | None = None) -> list[Pool]:
    """Every pool; `now` is the clock the time left is reckoned from (zpool's own way: what is
    left at this pass's average rate)."""
    try:
        doc = finite.loads(text)
    except ValueError as exc:
        raise ParseError(f"zpool status -j: not JSON ({exc}): {text[:80]!r}") from None
    pools_doc = doc.get("pools") if isinstance(doc, dict) else None
    if not isinstance(pools_doc, dict):
        raise ParseError(f"zpool status -j: no \"pools\" object: {text[:80]!r}")
    pools = []
    for key, p in pools_doc.items():
        if not isinstance(p, dict):
            raise ParseError(f"zpool status -j: pool {key!r} is not an object")
        pool = Pool(name=str(p.get("name", key)), state=_state(p.get("state")),
                    status=str(p.get("status") or "") if p.get("status") not in ("OK", None) else "",
                    action=str(p.get("action") or ""), msgid=str(p.get("msgid") or ""))
        pool.scan = _scan(p.get("scan_stats"), time.time() if now is None else now)
        roots = p.get("vdevs") or {}
        root = roots.get(pool.name) if isinstance(roots, dict) else None
        if isinstance(root, dict) and "vdevs" in root:
            _vdevs(pool, root.get("vdevs"), "data", 0, None)
        else:  # --json-flat-vdevs, or a root without children
            _vdevs(pool, {k: v for k, v in roots.items() if k != pool.name} if isinstance(roots, dict) else {},
                   "data", 0, None)
        for json_key, group in _GROUP_KEYS:
            _vdevs(pool, p.get(json_key), group, 0, None)
        count = p.get("error_count")
        pool.data_errors = integer(count) if count is not None else 0
        pools.append(pool)
    return pools
