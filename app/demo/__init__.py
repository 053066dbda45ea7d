"""`rackpulse demo`: a home lab that tells a story (a disk failing in bay 7, a UPS on battery,
a BGP peer flapping), with stand-ins for its tools and devices, served as a real server would."""
