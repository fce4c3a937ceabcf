"""Rules of area FAC."""
