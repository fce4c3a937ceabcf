"""Change impact between two blueprint versions (`archform diff`).

`diff_sets(old, new)` matches documents by name and classifies every changed field with the
update-policy table in `policy.py`; `report.py` renders the result as text, Markdown or JSON.
"""

from archform.diff.engine import Change, DiffReport, diff_sets
from archform.diff.impact import Impact

__all__ = ["Change", "DiffReport", "Impact", "diff_sets"]
