"""`rackpulse agent`: collects on this host into an outbox and pushes it to a server. No database
toolkit, no web framework, no alerting: only what a Raspberry Pi needs (tests/test_house_rules.py)."""
