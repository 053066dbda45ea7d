"""The database through SQLAlchemy 2 (SQLite or PostgreSQL): tables, samples, rollups and chunks,
the inventory and its events, backups. The ground floor of the app: it imports nothing of app/
but app.credentials and app.files."""
