"""Architecture diagrams of blueprints (`archform diagram`): Mermaid, DOT, SVG and PNG.

`build()` turns loaded blueprints into a renderer-neutral graph (`model.py`); `to_mermaid`
renders it for PR comments, `to_dot` as Graphviz source and `render` lays it out with
Graphviz into SVG or PNG. Imports `archform.spec` only.
"""

from archform.diagram.build import build
from archform.diagram.graphviz import render, to_dot
from archform.diagram.mermaid import to_mermaid

__all__ = ["build", "render", "to_dot", "to_mermaid"]
