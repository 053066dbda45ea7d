"""The house around the rack: heat pump, UPS, rails and fans."""
