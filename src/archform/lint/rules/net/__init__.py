"""Rules of area NET."""
