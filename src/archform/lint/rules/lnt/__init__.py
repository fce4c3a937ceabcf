"""Rules of area LNT."""
