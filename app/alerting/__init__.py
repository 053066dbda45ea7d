"""Alerts: rules evaluated over each host's findings and samples, their episodes (firing,
acknowledged, silenced), and delivery to the channels. Reads the snapshot and the storage; never
the web or the command line."""
