"""`offctl serve` and `offctl watch`: the cycles and the HTTP server (exporter), the state kept between cycles
(monitor)."""
