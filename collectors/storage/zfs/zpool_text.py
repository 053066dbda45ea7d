"""`zpool list -Hp` and `zpool status -p` as text: every OpenZFS and the Solaris-era
wording (" scrub:" for " scan:", "scrub completed after", progress on two lines)."""

from __future__ import annotations

import re

from collectors.base import ParseError
from collectors.storage.common import duration_seconds, integer, number
from collectors.storage.zfs.records import Pool, PoolUsage, Scan, Vdev

LIST_COLUMNS = ("name", "size", "allocated", "free", "fragmentation", "capacity", "dedupratio", "health")
_ALIASES = {"alloc": "allocated", "frag": "fragmentation", "cap": "capacity", "dedup": "dedupratio"}
_GROUP_WORDS = {"logs": "logs", "cache": "cache", "spares": "spares", "special": "special", "dedup": "dedup"}


def _ratio(value: str) -> float | None:
    n = number(value.rstrip("%"))
    return n / 100 if n is not None else None


def parse_zpool_list(text: str, columns: tuple[str, ...] = LIST_COLUMNS) -> list[PoolUsage]:
    """`zpool list -Hp -o <columns>` (tabs), or `zpool list [-p]` with its header (spaces).
    A line indented under a pool (`-v`) is a vdev and skipped."""
    pools = []
    cols = [c.lower() for c in columns]
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line[:1].isspace():
            continue
        fields = line.split("\t") if "\t" in line else line.split()
        if fields[0] == "NAME":
            cols = [_ALIASES.get(f.lower(), f.lower()) for f in fields]
            continue
        if len(fields) < min(len(cols), 2) or "name" not in cols:
            raise ParseError(f"line {lineno}: expected {len(cols)} fields ({', '.join(cols)}): {line!r}")
        row = dict(zip(cols, (f.strip() for f in fields), strict=False))
        pools.append(PoolUsage(
            name=row["name"], health=row.get("health") if row.get("health") not in (None, "-") else None,
            size=number(row.get("size")), allocated=number(row.get("allocated")), free=number(row.get("free")),
            fragmentation=_ratio(row.get("fragmentation", "-")), capacity=_ratio(row.get("capacity", "-")),
            dedup=number((row.get("dedupratio") or "-").rstrip("x")),
        ))
    return pools


def parse_scan(first: str, more: list[str]) -> Scan | None:
    """The scan line and its continuation lines."""
    text = " ".join([first.strip(), *(m.strip() for m in more)])
    low = text.lower()
    if not low or low.startswith("none requested"):
        return None
    function = "resilver" if low.startswith("resilver") else "scrub"
    scan = Scan(function=function, state="finished", text=text)
    if "in progress since" in low or "scanning" in low:
        scan.state = "paused" if "paused" in low else "scanning"
        if m := re.search(r"since (.+?)(?:\s{2,}|\s+\S+ scanned|$)", first.strip()):
            scan.when = m[1].strip()
        if m := re.search(r"([0-9]+(?:[.,][0-9]+)?)%\s*done", text):
            scan.ratio = float(m[1].replace(",", ".")) / 100
        if m := re.search(r"([0-9][0-9hmsd:, a-z]*?)\s+to go", text):
            scan.remaining_seconds = duration_seconds(m[1].split(",")[-1])
        if m := re.search(r"(\S+) (?:repaired|resilvered),", text):
            scan.repaired = number(m[1])
        return scan
    if "paused since" in low:
        scan.state = "paused"
    elif "canceled" in low or "cancelled" in low:
        scan.state = "canceled"
    elif "stopped" in low:
        scan.state = "canceled"
    scan.ratio = 1.0 if scan.state == "finished" else None
    if m := re.search(r"with (\d+) errors?", text):
        scan.errors = int(m[1])
    if m := re.search(r"(?:repaired|resilvered) (\S+) in", text):
        scan.repaired = number(m[1])
    if m := re.search(r"\bon (\w{3} \w{3}\s+\d+ [\d:]+ \d{4})", text):
        scan.when = m[1]
    return scan


def _errors_word(value: str) -> int:
    n = integer(value)
    if n is None:
        raise ValueError(value)
    return n


def parse_config(lines: list[str], pool: Pool) -> None:
    """The device tree under "config:": indentation gives the nesting."""
    base: int | None = None
    root_seen = False
    group = "data"
    stack: list[tuple[int, str]] = []  # (indent, name) of the enclosing vdevs
    for line in lines:
        if not line.strip():
            continue
        expanded = line.expandtabs(8)
        indent = len(expanded) - len(expanded.lstrip())
        fields = expanded.split()
        if fields[0] == "NAME" and base is None:
            base = indent
            continue
        if base is None:
            continue
        rel = indent - base
        if rel == 0 and len(fields) == 1 and fields[0] in _GROUP_WORDS:
            group, stack = _GROUP_WORDS[fields[0]], []
            continue
        if rel == 0 and group == "data" and not root_seen:
            root_seen = True  # the pool's own line, the first at the left: its state is the pool's
            continue
        if len(fields) < 2:
            raise ParseError(f"device line without a state: {line.strip()!r}")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        depth = len(stack)
        v = Vdev(name=fields[0], state=fields[1], group=group, depth=depth, parent=parent)
        rest = fields[2:]
        if len(rest) >= 3:
            try:
                v.read_errors, v.write_errors, v.checksum_errors = (_errors_word(x) for x in rest[:3])
                rest = rest[3:]
            except ValueError:
                pass
        v.note = " ".join(rest)
        if m := re.search(r"was (\S+)", v.note):
            v.path = m[1]
        if parent is not None:
            _mark_interior(pool, parent, group)
        pool.vdevs.append(v)
        stack.append((indent, v.name))


def _mark_interior(pool: Pool, name: str, group: str) -> None:
    for v in reversed(pool.vdevs):
        if v.name == name and v.group == group:
            v.leaf = False
            return


_KEY = re.compile(r"^\s{0,8}(pool|state|status|action|see|scan|scrub|config|errors):\s?(.*)$")


def parse_zpool_status(text: str) -> list[Pool]:
    """Every pool in `zpool status [-p] [-v] [-P]` output."""
    pools: list[Pool] = []
    if text.strip() in ("no pools available", ""):
        return pools
    pool: Pool | None = None
    key = ""
    block: list[str] = []

    def close() -> None:
        if pool is None or not key:
            return
        if key in ("scan", "scrub"):
            pool.scan = parse_scan(block[0], block[1:])
        elif key == "config":
            parse_config(block, pool)
        elif key in ("status", "action"):
            setattr(pool, key, " ".join(b.strip() for b in block).strip())
        elif key == "see":
            if m := re.search(r"(ZFS-\d{4}-\w+)", block[0]):
                pool.msgid = m[1]
        elif key == "errors":
            _errors(pool, block)

    for lineno, line in enumerate(text.splitlines(), 1):
        m = _KEY.match(line)
        if m and (m[1] != "errors" or pool is not None) and not (key == "config" and m[1] not in ("errors", "pool")):
            close()
            key, block = m[1], [m[2]]
            if key == "pool":
                pool = Pool(name=m[2].strip(), state="")
                pools.append(pool)
            elif key == "state" and pool is not None:
                pool.state = m[2].strip()
            elif pool is None:
                raise ParseError(f"line {lineno}: {m[1]!r} before any 'pool:' line: {line!r}")
            continue
        if pool is None:
            if line.strip():
                raise ParseError(f"line {lineno}: expected 'pool: <name>', got {line!r}")
            continue
        block.append(line)
    close()
    for p in pools:
        if not p.state:
            raise ParseError(f"pool {p.name!r} has no 'state:' line")
    return pools


def _errors(pool: Pool, block: list[str]) -> None:
    head = block[0].strip()
    if head.startswith("No known data errors"):
        pool.data_errors = 0
    elif m := re.match(r"(\d+) data errors?", head):
        pool.data_errors = int(m[1])
    elif "Permanent errors" in head:
        files = [b.strip() for b in block[1:] if b.strip()]
        pool.error_files = files[:100]
        pool.data_errors = len(files) or None
    else:
        pool.data_errors = None
