"""Rules of area INF."""
