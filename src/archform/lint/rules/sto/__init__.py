"""Rules of area STO."""
