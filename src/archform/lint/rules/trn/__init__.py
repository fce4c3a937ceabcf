"""Rules of area TRN."""
