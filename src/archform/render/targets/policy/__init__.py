"""Target `policy`: Pulumi CrossGuard policies checked against a fleet's program."""
