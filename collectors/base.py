"""The collector contract: samples, entities, errors and the command runner.

A collector reads one kind of source (a file tree under ``host_root`` or an external
command) and returns a ``CollectResult``. Parsing lives in pure ``parse_*`` functions
beside it; nothing here touches the network or the database.
"""

from __future__ import annotations

import os
import selectors
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from collectors.counters import Most
from collectors.state import State

Labels = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Sample:
    """One numeric value of one series at collection time."""

    metric: str  # full Prometheus name, e.g. "rackpulse_md_array_degraded"
    value: float
    labels: Labels = ()

    @classmethod
    def of(cls, metric: str, value: float, **labels: object) -> Sample:
        return cls(metric, float(value), tuple(sorted((k, "" if v is None else str(v)) for k, v in labels.items())))


@dataclass(frozen=True, slots=True)
class Entity:
    """A thing in the inventory (array, member slot, disk, bay) and its current attributes.

    Storage diffs attributes against the previous run and keeps every change as history:
    that is how "the disk in bay 7 changed" or "sdh left md0" is remembered.
    """

    kind: str
    key: str
    attrs: Mapping[str, Any]


@dataclass(frozen=True)
class MetricSpec:
    help: str
    kind: Literal["gauge", "counter"] = "gauge"
    # Whether history is kept in SQL. Identity and state-as-label series (``*_info``,
    # ``member_state{state=...}``) change by label, and that history is the inventory's
    # entity events; storing their constant 1 every 30 s would only grow the file.
    store: bool = True
    # A state as a number (0 down, 1 up): its words by value, for charts drawn as a timeline
    # of states rather than a line averaged to 0.3.
    states: tuple[str, ...] = ()
    # A number with no unit is a count (links up, prefixes, flaps), drawn on whole-number ticks;
    # one that is not (a load average, a COP, a share of 0..1) says so here.
    fraction: bool = False


@dataclass
class CollectResult:
    samples: list[Sample] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    # What its findings, tile, section and bays read: the plug-in's own State type (arrays,
    # disks ...); None when the run has none (the source is absent, or it failed).
    state: State | None = None
    # Problems with single items that did not stop the rest (telegraf's AddError).
    warnings: list[str] = field(default_factory=list)


class CollectorError(Exception):
    """Expected failure: the source answered badly or not at all."""


class ParseError(CollectorError):
    """The input is not in the expected format; the message quotes the offending line."""


class CommandNotFound(CollectorError):
    """The configured command is not installed."""


class NoData(CollectorError):
    """The source is absent on this host (no /proc/mdstat, no disks): not a failure."""


class Collector:
    """Base for collectors. Subclasses set ``name`` and ``metrics`` and implement ``collect``."""

    name: ClassVar[str]
    metrics: ClassVar[Mapping[str, MetricSpec]]

    def collect(self) -> CollectResult:  # pragma: no cover - interface
        raise NotImplementedError

    def restore(self, state: State) -> None:
        """Seed memory from the state stored by the last run before a restart (optional): the
        plug-in's own State type, read back from the database or the agent's outbox."""

    def counter_limits(self) -> Mapping[str, Most]:
        """How fast each of its counters can rise at most (the most the device can do): every
        counter it exports passes the scheduler's CounterBook (collectors/counters.py), and one not
        named here is held to the most of its unit (counters.BY_UNIT)."""
        return {}

    def counter_now(self) -> float:
        """The time its counters' rises are judged by: its own clock when it has one (the demo's
        heat pump lives a day in four minutes on its simulated clock)."""
        clock = getattr(self, "clock", None)
        return float(clock()) if callable(clock) else time.time()


@dataclass(frozen=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: bytes


Runner = Callable[[Sequence[str], float], CommandResult]


# Per command, stdout and stderr each: far beyond any real `smartctl --json` or `vtysh` answer,
# and what keeps a command that never stops printing from growing this process without end.
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
STDERR_MAX_BYTES = 64 * 1024  # only its first lines make an error message


def run_command(argv: Sequence[str], timeout: float, max_bytes: int = DEFAULT_MAX_BYTES) -> CommandResult:
    """Run ``argv`` (never through a shell) with a hard timeout and a cap on its output.

    The child gets its own process group so that a hung command and anything it
    spawned (``sudo smartctl`` ...) is killed as a whole: TERM, then KILL. Past ``max_bytes``
    of standard output it is killed the same way and the run is an error.
    """
    if not argv:
        raise CollectorError("empty command")
    if _exiting.is_set():
        raise CollectorError(f"not run, rackpulse is exiting: {' '.join(argv)}")
    try:
        proc = subprocess.Popen(  # noqa: S603 - argv list from config, no shell
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise CommandNotFound(f"command not found: {argv[0]!r}") from exc
    except PermissionError as exc:
        raise CollectorError(f"permission denied running {argv[0]!r}") from exc
    with _running_lock:
        _running.add(proc)
    try:
        out, err = _read_capped(proc, timeout, max_bytes)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raise CollectorError(f"command timed out after {timeout:g}s: {' '.join(argv)}") from None
    except OutputTooLarge:
        _kill_group(proc)
        raise CollectorError(f"output exceeded {max_bytes} bytes (command_max_bytes); command killed: "
                             f"{' '.join(argv)}") from None
    except BaseException:
        _kill_group(proc, grace=0.5)  # stopped from outside (kill_running_commands), or a bug: never left running
        raise
    finally:
        with _running_lock:
            _running.discard(proc)
    return CommandResult(tuple(argv), proc.returncode, out, err)


_running: set[subprocess.Popen[bytes]] = set()
_running_lock = threading.Lock()


_exiting = threading.Event()


def exiting() -> bool:
    """Whether commands are refused because the process is on its way out."""
    return _exiting.is_set()


def refuse_commands_from_now() -> int:
    """The process is exiting: kill what runs and start nothing more. Python waits for the threads
    of every thread pool before it exits, and a collector's pool (pings, one a probe) went on
    starting commands after the scheduler had stopped: Ctrl-C once took 10 s and the watchdog."""
    _exiting.set()
    return kill_running_commands()


def kill_running_commands(grace: float = 0.5) -> int:
    """Kill every command a collector is running now (on stop: a hung smartctl must neither keep
    rackpulse from exiting nor outlive it). Returns how many there were."""
    with _running_lock:
        procs = list(_running)
    for proc in procs:
        _kill_group(proc, grace, close_pipes=False)  # their threads read on, to the end of the output
    return len(procs)


class OutputTooLarge(Exception):
    pass


def _read_capped(proc: subprocess.Popen[bytes], timeout: float, max_bytes: int) -> tuple[bytes, bytes]:
    """communicate(), but never holding more than max_bytes of stdout (stderr is kept to its start).

    Output is kept as a list of chunks, joined once at the end: a growing buffer would be
    reallocated again and again, and the freed copies stay in the allocator's arenas."""
    deadline = time.monotonic() + timeout
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()  # type: ignore[union-attr]
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    sizes = dict.fromkeys(chunks, 0)
    with selectors.DefaultSelector() as sel:
        for fd in chunks:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout)
            for key, _ in sel.select(left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                limit = max_bytes if key.fd == out_fd else STDERR_MAX_BYTES
                if key.fd == out_fd and sizes[key.fd] + len(chunk) > limit:
                    chunks[out_fd].clear()
                    raise OutputTooLarge
                if sizes[key.fd] < limit:
                    chunks[key.fd].append(chunk[: limit - sizes[key.fd]])
                    sizes[key.fd] += len(chunk)
    try:
        proc.wait(max(deadline - time.monotonic(), 0.01))
    except subprocess.TimeoutExpired:
        raise subprocess.TimeoutExpired(proc.args, timeout) from None  # closed its output, still running
    finally:
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _kill_group(proc: subprocess.Popen[bytes], grace: float = 2.0, close_pipes: bool = True) -> None:
    """Stop a command's whole process group: SIGTERM, then SIGKILL after `grace` seconds.

    Our ends of its pipes are closed first and never read again: a command that ignores SIGTERM
    and keeps printing (``trap '' TERM; exec yes``) must not be read without a cap while it is
    given its grace (communicate() here once held 9 GB). Not when another thread is reading them
    (kill_running_commands): a pipe closed under its select() is dropped from the epoll set
    without a word, and the reader waited out the command's whole timeout (a Ctrl-C took 10 s);
    that reader keeps its cap and sees the end of the output when the command dies."""
    for pipe in (proc.stdout, proc.stderr) if close_pipes else ():
        if pipe is not None:
            pipe.close()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue


def host_path(host_root: Path, path: str) -> Path:
    """``/proc/mdstat`` under ``host_root`` (``/`` on a real host, a fixture tree in tests)."""
    return host_root / path.lstrip("/")


def read_text(path: Path, limit: int = 4 * 1024 * 1024) -> str:
    """Read a small kernel/sysfs file; binary garbage is decoded with replacement, never raised.

    Only a regular file is read (procfs and sysfs files are): a FIFO in a host tree would block
    the open forever, and /dev/zero or a tty never ends. Either is an OSError, like a missing file.
    O_NONBLOCK lets the open of a FIFO return at once, so it can be refused."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        data = fh.read(limit)
    return data.decode("utf-8", errors="replace")


MAX_LINE = 1024 * 1024


def read_line(sock: Any, buf: bytearray, where: str, timeout: float, prompt: bytes | None = None) -> str:
    """One line from a line-based protocol (NUT, OpenVPN management), CR stripped.

    ``buf`` keeps what was read past the line. ``prompt`` returns a prompt that is not
    followed by a newline ("ENTER PASSWORD:") as soon as it is complete. A peer that sends
    more than MAX_LINE bytes without a newline is an error, not a growing buffer.
    """
    while b"\n" not in buf:
        if len(buf) > MAX_LINE:
            raise CollectorError(f"{where}: a line longer than {MAX_LINE} bytes; not this protocol")
        if prompt and buf.startswith(prompt):
            del buf[: len(prompt)]
            return prompt.decode()
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            raise CollectorError(f"{where}: no answer within {timeout:g}s") from None
        except OSError as exc:
            raise CollectorError(f"{where}: {exc}") from None
        if not chunk:
            raise CollectorError(f"{where}: connection closed")
        buf += chunk
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return line.decode("utf-8", "replace").rstrip("\r")
