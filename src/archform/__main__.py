"""Allow ``python -m archform``."""

from archform.cli import main

main()
