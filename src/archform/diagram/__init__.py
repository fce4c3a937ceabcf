"""Architecture diagrams of blueprints (`archform diagram`): Mermaid and SVG.

`build()` turns loaded blueprints into a renderer-neutral graph (`model.py`); `to_mermaid`
and `to_svg` render it. Imports `archform.spec` only.
"""

from archform.diagram.build import build
from archform.diagram.mermaid import to_mermaid
from archform.diagram.svg import to_svg

__all__ = ["build", "to_mermaid", "to_svg"]
