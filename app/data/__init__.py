"""Is the data safe? Each data set the user names (or each array's mount point): where it lives,
the redundancy left under it, every copy that covers it, and the verdict in words."""
