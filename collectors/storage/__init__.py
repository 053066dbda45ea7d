"""Storage beyond md: ZFS pools, btrfs filesystems, MegaRAID/PERC controllers and Ceph
clusters. Each collector reads its tool's output through the shared command runner; a tool
that is not installed means "not used here". A failed device is placed in its bay by the same
[[disks.bays]] rules as md members (serial, WWN, by-path, enclosure or controller slot)."""
