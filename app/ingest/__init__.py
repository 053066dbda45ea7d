"""The server's side of agents: their tokens, each batch stored once, each agent host's live view."""
