"""`rackpulse init`: a starter config from what the host has (discover.py finds it, toml.py
writes it as a commented TOML the user edits)."""
