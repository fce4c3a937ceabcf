"""Rules of area SCH."""
