#!/usr/bin/env python3
"""The documentation's tables of dialects against the dialect table.

Help, the man page, the bench's usage, the error messages and ci/matrix.sh
list the dialects from templates/dialects.toml themselves; the prose of
the docs cannot, so a Markdown table whose first column is headed
"dialect" (README.md, docs/*.md) is checked here: each of its rows names
a row of the template (by key or alias: "mysql / mariadb"), and every row
of the template has its line.  A new dialect is documented when this
passes.
Run: python3 tests/test_dialect_docs.py
"""

import glob
import os
import re
import tomllib
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(ROOT, "templates", "dialects.toml")


def template_rows():
    """key -> its aliases, for every dialect row."""
    with open(TEMPLATE, "rb") as f:
        rows = tomllib.load(f)
    return {k: v.get("aliases", []) for k, v in rows.items() if k != "common"}


def dialect_tables(path):
    """The first cells of the rows of every table in a Markdown file whose
    header's first cell is "dialect", each as the list of names it holds
    (backquotes dropped, split on '/' and ',')."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    tables = []
    i = 0
    while i < len(lines):
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        if (lines[i].lstrip().startswith("|") and cells[0].lower() == "dialect"
                and i + 1 < len(lines) and re.match(r"\s*\|\s*:?-", lines[i + 1])):
            rows = []
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                first = lines[i].strip().strip("|").split("|")[0]
                rows.append([n.strip() for n in re.split(r"[/,]", first.replace("`", ""))
                             if n.strip()])
                i += 1
            tables.append(rows)
        else:
            i += 1
    return tables


def doc_files():
    return [p for p in [os.path.join(ROOT, "README.md")]
            + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) if os.path.exists(p)]


class DialectTables(unittest.TestCase):
    def test_tables_list_every_row(self):
        rows = template_rows()
        owner = {k: k for k in rows}
        owner.update({a: k for k, aliases in rows.items() for a in aliases})
        found = 0
        for path in doc_files():
            rel = os.path.relpath(path, ROOT)
            for n, table in enumerate(dialect_tables(path)):
                found += 1
                with self.subTest(file=rel, table=n + 1):
                    named = set()
                    for names in table:
                        for name in names:
                            self.assertIn(name, owner, "%s: '%s' is no row of %s (key or alias)"
                                          % (rel, name, "templates/dialects.toml"))
                            named.add(owner.get(name))
                    missing = sorted(set(rows) - named)
                    self.assertEqual(missing, [], "%s: the table of dialects has no line for "
                                     "%s (a row of templates/dialects.toml)"
                                     % (rel, ", ".join(missing)))
        # The check is only worth something while there is a table to check.
        self.assertGreater(found, 0, "no table of dialects in README.md or docs/*.md")

    def test_parser(self):
        # What the check reads out of a table, so that it cannot pass by
        # reading nothing.
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            f.write("text\n\n| dialect | clock |\n| --- | --- |\n| sqlite | x |\n"
                    "| `mysql` / mariadb | y |\n\nafter\n| other | z |\n| --- | --- |\n"
                    "| nope | 1 |\n")
        self.addCleanup(os.remove, f.name)
        self.assertEqual(dialect_tables(f.name), [[["sqlite"], ["mysql", "mariadb"]]])


if __name__ == "__main__":
    import run_tests  # tests/run_tests.py: unittest.main() that leaves a result file

    run_tests.unittest_main()
