"""A MegaRAID or PERC controller's tool, when `rackpulse init` finds it, as the starter
config's [collectors.megaraid] (perccli64 named when it is the only one)."""

from __future__ import annotations

from collectors.starter import HostTree, q


def starter(tree: HostTree) -> list[str]:
    storcli = tree.tool("storcli64") or tree.tool("storcli")
    perccli = tree.tool("perccli64")
    if storcli:
        return ["[collectors.megaraid]", f"## storcli found ({storcli}): on by default, it reads the controllers"]
    if perccli:
        return ["[collectors.megaraid]", f"## perccli64 found ({perccli}): a PERC", f"storcli = [{q('perccli64')}]"]
    return []
