"""The rule catalog: one module per rule, in one package per area."""
