"""The web: FastAPI routes, one template per page (whole or as an htmx fragment), the guard every
request passes and the Site the routes share. The top of the house with the command line: it
imports the rooms below it; nothing below imports it."""
