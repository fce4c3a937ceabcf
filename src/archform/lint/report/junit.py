"""JUnit XML: one testcase per (file, rule); a failure per unsuppressed finding set."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from archform.lint.finding import Finding
from archform.lint.report import LintReport


def render_junit(report: LintReport) -> str:
    """A <testsuites> document with one <testsuite> per file."""
    by_case: dict[tuple[str, str], list[Finding]] = defaultdict(list)
    for f in report.result.active():
        by_case[(f.file, f.rule)].append(f)
    files = sorted(set(report.files) | {f.file for f in report.result.findings})
    root = ET.Element("testsuites", name="archform lint")
    total_tests = total_failures = 0
    for file in files:
        suite = ET.SubElement(root, "testsuite", name=file)
        tests = failures = 0
        for rule in report.result.rules:
            tests += 1
            case = ET.SubElement(suite, "testcase", name=f"{rule.code} {rule.name}", classname=file)
            found = by_case.get((file, rule.code))
            if found:
                failures += 1
                failure = ET.SubElement(
                    case,
                    "failure",
                    type=rule.severity,
                    message=f"{len(found)} finding(s) of {rule.code}",
                )
                failure.text = "\n".join(
                    f"{f.file}:{f.line}:{f.column}: {f.rule} [{f.severity}] {f.message}"
                    for f in found
                )
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        total_tests += tests
        total_failures += failures
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
