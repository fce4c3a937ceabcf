"""Shared code names no provider: every provider name lives in its package.

Counts the provider names (each provider package's name, and the Pulumi SDK module and
package names of those with an SDK) in the Python source outside `archform/providers/<name>/`:
string literals and identifiers, not comments or docstrings, which explain. The count is 0:
what shared code needs of a provider it asks the registry for (each package contributes its
facts through its layer's Protocol), never by name. `PENDING` holds the one file another
branch moves into its provider package.
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import tokenize
from collections import Counter
from pathlib import Path

from archform import providers
from archform.render.targets.common.clouds import cloud

SRC = Path(providers.__file__).resolve().parent.parent  # src/archform
PROVIDERS = SRC / "providers"

# (file under src/archform, name): the one name left outside its package, on its way in.
PENDING: dict[tuple[str, str], str] = {
    # Front Door's header name in a program shipped to Front Door fleets.
    ("render/targets/kubernetes/shipped/archform_frontdoor.py", "azure"): "moved by branch tplprov",
}


def _words() -> set[str]:
    """Every provider's name and its Pulumi SDK's package and module names."""
    words = set(providers.names())
    for name in providers.names():
        sdk = cloud(name).pulumi_sdk
        if sdk is not None:
            words |= {sdk[0], sdk[0].replace("-", "_"), sdk[0].removeprefix("pulumi-")}
    return words


def _docstring_lines(tree: ast.AST) -> set[int]:
    """Lines of module, class and function docstrings (explanations, not code)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            doc = body[0].value if body and isinstance(body[0], ast.Expr) else None
            if isinstance(doc, ast.Constant) and isinstance(doc.value, str):
                first = body[0]
                lines |= set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def names_in(text: str, words: set[str]) -> Counter[str]:
    """How often each of `words` occurs as a whole word in code (strings and identifiers).

    In strings the name counts as code writes it (lower case: `"aws"`, `"aws:region"`,
    `"pulumi_aws"`); prose in a message ("AWS quotes GB") is not a name code dispatches on.
    In identifiers any case counts (`aws_training`, `GCP_ALIASES`).
    """
    alternatives = "|".join(sorted(map(re.escape, words), key=len, reverse=True))
    word = r"(?<![A-Za-z0-9])(" + alternatives + r")(?![A-Za-z0-9])"
    in_string = re.compile(word)
    in_name = re.compile(word, re.IGNORECASE)
    skip = _docstring_lines(ast.parse(text))
    found: Counter[str] = Counter()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (tokenize.NAME, tokenize.STRING) or tok.start[0] in skip:
            continue
        if tok.type == tokenize.NAME:
            # snake_case parts: aws_training, GCP_ALIASES
            hits = in_name.finditer(tok.string.replace("_", " "))
        else:
            hits = in_string.finditer(tok.string)
        found.update(m.group(1).lower() for m in hits)
    return found


def count_outside(src: Path, words: set[str]) -> Counter[tuple[str, str]]:
    """(file, name) -> occurrences, over every .py of `src` outside src/providers/<name>/."""
    out: Counter[tuple[str, str]] = Counter()
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        if rel.parts[0] == "providers" and len(rel.parts) > 2:
            continue
        for name, n in names_in(path.read_text(), words).items():
            out[(rel.as_posix(), name)] += n
    return out


def test_the_counter_sees_names_in_strings_and_identifiers_only() -> None:
    text = (
        '"""Docstring about aws."""\n'
        "# a comment about gcp\n"
        'x = "aws"\n'
        "GCP_ALIASES = {}\n"
        'y = f"{p} on azure"\n'
        'v = "AWS quotes instance store in GB"\n'
        'z = "pulumi_aws"\n'
        'w = "awsome"\n'
        "def f(azure_download: int) -> None: ...\n"
    )
    found = names_in(text, {"aws", "gcp", "azure", "pulumi_aws"})
    assert found == Counter({"aws": 1, "gcp": 1, "azure": 2, "pulumi_aws": 1})


def test_shared_code_names_no_provider() -> None:
    found = count_outside(SRC, _words())
    for key in PENDING:
        found.pop(key, None)
    assert found == {}


def test_the_count_sees_a_name_planted_in_shared_code(tmp_path: Path) -> None:
    # A copy of the source with one branch on a provider written into a shared module:
    # the count must report exactly that file and name.
    copy = tmp_path / "archform"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "data"))
    planted = copy / "spec" / "validate.py"
    planted.write_text(planted.read_text() + '\n\nIS_GCP = "gcp"\n')
    inside = copy / "providers" / "aws" / "spec.py"  # a provider's own package: not counted
    inside.write_text(inside.read_text() + '\n\nIS_GCP = "gcp"\n')
    found = count_outside(copy, _words())
    for key in PENDING:
        found.pop(key, None)
    # `IS_GCP` (an identifier) and `"gcp"` (a string literal): two occurrences.
    assert found == Counter({("spec/validate.py", "gcp"): 2})


def test_the_pending_entries_are_still_needed() -> None:
    found = count_outside(SRC, _words())
    stale = sorted(f"{f}: {name}" for f, name in PENDING if (f, name) not in found)
    assert not stale, "entries no longer needed (their names have moved):\n" + "\n".join(stale)
