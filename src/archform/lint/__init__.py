"""The architecture linter: rules over validated blueprints, findings, reports."""
