"""People and access: who may log in (users, roles, passwords, two-factor), the API tokens of
scripts, and the audit log of what they changed. Below the web and the command line, which
use it; it imports only the storage and app.credentials, never app.web or app.cli."""
