"""Rules of area SEC."""
