"""On-prem: every fact and behaviour archform has for this provider, one submodule per layer.

`spec` (SPEC: facts and checks of the blueprint), `render/` (RENDER: facts the shared
targets read, and the provider's own targets), `diff` (DIFF: change impact), `diagram`
(DIAGRAM: shapes). Found by `archform.providers.names()`; RANK orders the list.
"""

RANK = 3
