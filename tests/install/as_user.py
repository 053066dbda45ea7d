"""Run a command as another user, the way its systemd unit would: that user's uid and groups, a
capability bounding set, no inheritable capability. Called as root inside a private mount
namespace (`unshare --mount`): the folders the command needs but that user may not pass through
(this machine's Python lives under /root, mode 0700) are shown to it through bind mounts of
just the entries it needs, in that namespace only.

    unshare --mount --propagation private -- python as_user.py USER BOUNDING SCRATCH -- ARGV...
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path


def passable(folder: Path) -> bool:
    return bool(folder.stat().st_mode & stat.S_IXOTH)


def open_the_way(needed: list[Path], scratch: Path) -> None:
    """Make every folder on the way to `needed` passable for others, by binding over each closed
    one a folder that holds only binds of the entries on the way."""
    for _ in range(16):  # one level of closed folders per round, outermost first
        closed: dict[Path, set[str]] = {}
        for path in needed:
            for parent in reversed(path.parents):
                child = path.relative_to(parent).parts[0] if path != parent else None
                if child and not passable(parent):
                    closed.setdefault(parent, set()).add(child)
                    break
        if not closed:
            return
        for folder, children in closed.items():
            view = scratch / f"view{len(list(scratch.iterdir()))}"
            view.mkdir(mode=0o755)
            os.chmod(view, 0o755)
            for child in children:
                (view / child).mkdir()
                subprocess.run(["mount", "--bind", str(folder / child), str(view / child)], check=True)
            subprocess.run(["mount", "--rbind", str(view), str(folder)], check=True)
    raise RuntimeError(f"still closed after 16 rounds: {needed}")


def main() -> None:
    user, bounding, scratch, sep, *argv = sys.argv[1:]
    assert sep == "--" and argv
    root = Path(__file__).resolve().parents[2]
    open_the_way([Path(sys.base_prefix).resolve(), Path(sys.prefix), root], Path(scratch))
    os.execvp("setpriv", ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups",
                          f"--bounding-set={bounding}", "--inh-caps=-all", "--", *argv])


if __name__ == "__main__":
    main()
