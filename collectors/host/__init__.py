"""The host itself: CPU, load, memory, filesystems, interfaces, block devices."""
