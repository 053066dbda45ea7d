"""Installing rackpulse on a real machine: the sudoers drop-in, the doctor."""
