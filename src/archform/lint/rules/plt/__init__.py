"""Rules of area PLT."""
