"""Sending what rackpulse collects to the tools its users already run: Home Assistant over
MQTT discovery (mqtt.py, homeassistant.py) and Prometheus remote write (remote_write.py)."""
