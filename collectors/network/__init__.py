"""The network: BGP, bonds, VPN tunnels, switch ports."""
