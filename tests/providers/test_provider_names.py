"""Shared code names no provider: every provider name lives in its package.

Counts the provider names (each provider package's name, and the Pulumi SDK module and
package names of those with an SDK) in the Python source outside `archform/providers/<name>/`:
string literals and identifiers, not comments or docstrings, which explain. The count is
checked against an allow-list of (file, name) pairs, each with its reason: names that are
data keys or output names kept byte-identical, documentation, and importers of other tools'
files that target one cloud. No entry is a branch on a provider; the list may only shrink.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import Counter
from pathlib import Path

from archform import providers
from archform.render.targets.common.clouds import cloud

SRC = Path(providers.__file__).resolve().parent.parent  # src/archform
PROVIDERS = SRC / "providers"

# Why a name may stay outside its package (none is a branch on a provider):
OUTPUT = "a name in generated output (kept byte-identical); the value is data"
DATA = "a key of a data file (catalog, deploy timing), read by the provider's package"
DOCS = "schema field description: user documentation (the schema snapshot)"
IMPORTER = "importer of another tool's files, which target one cloud (or name its clouds)"

# (file under src/archform, name): why the name stays outside its package.
ALLOWED: dict[tuple[str, str], str] = {
    ("render/targets/ansible/roles.py", "azure"): OUTPUT,
    ("render/targets/fleet/target.py", "azure"): OUTPUT,
    ("spec/catalog.py", "azure"): DATA,
    ("spec/deploy_timing.py", "azure"): DATA,
    ("spec/images.py", "aws"): "aws_ofi_nccl: a package images ship (the aws-ofi-nccl plugin)",
    ("spec/models/inference.py", "aws"): DOCS,
    ("spec/models/inference.py", "azure"): DOCS,
    ("spec/models/inference.py", "gcp"): DOCS,
    ("spec/models/training.py", "aws"): DOCS,
    ("spec/models/training.py", "azure"): DOCS,
    ("spec/models/training.py", "gcp"): DOCS,
    ("spec/peers/cluster_toolkit.py", "gcp"): IMPORTER,
    ("spec/peers/parallelcluster.py", "aws"): IMPORTER,
    ("spec/peers/pcluster_schema.py", "aws"): IMPORTER,
    ("spec/peers/skypilot.py", "aws"): IMPORTER,
    ("spec/peers/skypilot.py", "azure"): IMPORTER,
    ("spec/peers/skypilot.py", "gcp"): IMPORTER,
    ("spec/peers/skyserve.py", "aws"): IMPORTER,
    ("spec/peers/skyserve.py", "azure"): IMPORTER,
    ("spec/peers/skyserve.py", "gcp"): IMPORTER,
    (
        "spec/validate.py",
        "azure",
    ): "azure_files: a product name users write for kind nfs (did-you-mean)",
    ("verify/checks/checkov.py", "azure"): "prose: where cloud CLIs write (~/.azure)",
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
    unexpected = sorted(f"{f}: {n} x{k}" for (f, n), k in found.items() if (f, n) not in ALLOWED)
    assert not unexpected, "provider names outside archform/providers/<name>/:\n" + "\n".join(
        unexpected
    )


def test_the_allow_list_is_not_stale() -> None:
    found = count_outside(SRC, _words())
    stale = sorted(f"{f}: {name}" for f, name in ALLOWED if (f, name) not in found)
    assert not stale, "allow-list entries no longer needed:\n" + "\n".join(stale)
