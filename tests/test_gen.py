#!/usr/bin/env python3
"""Tests of gen/gen_dialects.py: the real table, inheritance from
[common] and its snippets, malformed tables, escaping and determinism;
and of src/dialect.c, the lookup over the generated table, compiled with
it.  Every per-row check runs on every row the table has, whatever its
key: a new dialect's row is checked as soon as it is written, and the
tests that check every row print which rows they checked.  Writes only
under its own temporary directories.
Run: python3 tests/test_gen.py
     SQLEASE_GEN_TEMPLATE=path/dialects.toml python3 tests/test_gen.py
       (the same tests on another table: how the test that adds a row
       runs them; it is then skipped)
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "gen", "gen_dialects.py")
TEMPLATE = os.environ.get("SQLEASE_GEN_TEMPLATE") or os.path.join(ROOT, "templates",
                                                                  "dialects.toml")
DIALECT_C = os.path.join(ROOT, "src", "dialect.c")
SRC = os.path.join(ROOT, "src")
INCLUDE = os.path.join(ROOT, "include")
CC = os.environ.get("HOST_CC") or shutil.which("gcc") or shutil.which("cc") or "cc"
CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
REL = "templates/dialects.toml"

STATEMENTS = ["now", "create_table", "probe_token", "add_token", "probe_version",
              "add_version", "probe_data", "add_data", "probe_ttl", "add_ttl",
              "probe_last_owner", "add_last_owner", "probe_fire_at", "add_fire_at",
              "probe_handoff_to", "add_handoff_to", "probe_priority", "add_priority",
              "fill_nulls", "repair", "probe_exact", "make_exact", "seed", "acquire",
              "take_watched", "take_fire", "renew", "release", "release_force", "status",
              "list", "handoff_request", "handoff_cancel", "handoff", "ready_list",
              "fire_create_table", "fire_claim", "fire_reclaim", "fire_end",
              "fire_record", "fire_abandon", "fire_last", "fire_read", "fire_list",
              "fire_prune", "fire_done", "hold_create_table", "hold_start", "hold_expire",
              "hold_end", "hold_force", "hold_list", "hold_prune"]
FRAGMENTS = ["fence"]
# The statements of the fire ledger: each names {fire_table}; those
# fenced by the lease (or reading it) name {table} too, and the others
# do not.
FIRE_STATEMENTS = [st for st in STATEMENTS if st.startswith("fire_")]
FIRE_FENCED = ["fire_claim", "fire_reclaim", "fire_record", "fire_abandon", "fire_read",
               "fire_done"]
# The holder history's: each names {history_table}; those that read the
# lease row (the new hold's row, the forced release's, the holder's end,
# which is the next hold's start at the latest) name {table} too.
HOLD_STATEMENTS = [st for st in STATEMENTS if st.startswith("hold_")]
HOLD_FROM_LEASE = ["hold_start", "hold_force", "hold_end"]

# The bound parameters, by their enum value (gen/gen_dialects.py PARAM_LIST).
P = {name: i for i, name in enumerate(
    ("name", "owner", "ttl_ms", "token", "min_hold_ms", "data", "version", "job", "fire_at_ms",
     "state", "attempt", "host", "has_exit", "exit_status", "note", "since_ms", "before_ms",
     "pid", "ended_at_ms", "priority", "target", "reserve_ms", "prefix"))}
# The statements of the hand-over (see check_row_handoff).
HANDOFF_STATEMENTS = ["handoff_request", "handoff_cancel", "handoff", "ready_list"]
EACH_STATEMENTS = ["renew_each", "renewed_each", "status_each", "seed_each", "take_each",
                   "release_each", "hold_start_each", "hold_expire_each", "hold_end_each"]

# Prints, per dialect and statement, the count of '?' in the SQL, the
# parameter list and the SQL itself; then answers detect/find queries
# given on the command line.
PROBE_C = r"""
#include <stdio.h>
#include <string.h>
#include "dialect.h"

static void list(const char *key, const char *name, const sqle_strings *l)
{
    size_t i;
    for (i = 0; i < l->n; i++)
        printf("F %s %s %s\n", key, name, l->items[i]);
}

#define RULES(key, r) \
    list(key, "timeout_sqlstates", &(r)->timeout_sqlstates); \
    list(key, "connection_lost_sqlstates", &(r)->connection_lost_sqlstates); \
    list(key, "connection_lost_messages", &(r)->connection_lost_messages); \
    list(key, "missing_table_sqlstates", &(r)->missing_table_sqlstates); \
    list(key, "missing_table_messages", &(r)->missing_table_messages); \
    list(key, "generic_sqlstates", &(r)->generic_sqlstates); \
    list(key, "serialization_sqlstates", &(r)->serialization_sqlstates); \
    list(key, "locked_messages", &(r)->locked_messages); \
    list(key, "privilege_sqlstates", &(r)->privilege_sqlstates); \
    list(key, "privilege_messages", &(r)->privilege_messages); \
    list(key, "config_sqlstates", &(r)->config_sqlstates); \
    list(key, "config_messages", &(r)->config_messages)

static void stmt(const char *key, const char *name, const sqle_stmt *s)
{
    size_t i, q = 0;
    for (i = 0; s->sql[i]; i++)
        if (s->sql[i] == '?')
            q++;
    printf("S %s %s %zu", key, name, q);
    printf(" [");
    for (i = 0; i < s->nparams; i++)
        printf("%s%u", i ? "," : "", (unsigned)s->params[i]);
    printf("] %s\n", s->sql);
}

/* A batched statement as the library builds it for 3 leases: the
 * markers, the parameters in binding order, the text. */
static void each(const char *key, const char *name, const sqle_each_stmt *e)
{
    size_t i, n, q = 0;
    char sql[8192];
    unsigned char params[64];
    size_t np = 0;

    if (e->head.sql == NULL) {
        printf("E %s %s 0 [] -\n", key, name);
        return;
    }
    snprintf(sql, sizeof sql, "%s", e->head.sql);
    for (i = 0; i < e->head.nparams; i++)
        params[np++] = e->head.params[i];
    for (n = 0; n < 3; n++) {
        if (n > 0)
            strcat(sql, e->sep);
        strcat(sql, e->item.sql);
        for (i = 0; i < e->item.nparams; i++)
            params[np++] = e->item.params[i];
    }
    strcat(sql, e->tail.sql);
    for (i = 0; i < e->tail.nparams; i++)
        params[np++] = e->tail.params[i];
    for (i = 0; sql[i]; i++)
        if (sql[i] == '?')
            q++;
    printf("E %s %s %zu [", key, name, q);
    for (i = 0; i < np; i++)
        printf("%s%u", i ? "," : "", (unsigned)params[i]);
    printf("] %s\n", sql);
}

int main(int argc, char **argv)
{
    size_t i;
    int a;
    printf("K %s\n", sqle_dialect_keys());
    printf("N %zu\n", sqle_dialect_count);
    RULES("[common]", &sqle_common_failures);
    for (i = 0; i < sqle_dialect_count; i++) {
        const sqle_dialect *d = &sqle_dialects[i];
        printf("D %s setup=%zu literal=%d\n", d->key, d->nsession_setup, d->string_literal);
        printf("T %s %s\n", d->key, d->now_ms);
        RULES(d->key, &d->failures);
@STMTS@
        each(d->key, "renew_each", &d->renew_each);
        each(d->key, "renewed_each", &d->renewed_each);
        each(d->key, "status_each", &d->status_each);
        each(d->key, "seed_each", &d->seed_each);
        each(d->key, "take_each", &d->take_each);
        each(d->key, "release_each", &d->release_each);
        each(d->key, "hold_start_each", &d->hold_start_each);
        each(d->key, "hold_expire_each", &d->hold_expire_each);
        each(d->key, "hold_end_each", &d->hold_end_each);
        printf("B %s returns=%d batch_max=%zu max_params=%zu\n", d->key,
               d->renew_each_returns, d->batch_max, d->max_params);
    }
    for (a = 1; a < argc; a++) {
        const sqle_dialect *d;
        if (strncmp(argv[a], "detect:", 7) == 0)
            d = sqle_dialect_detect(argv[a] + 7);
        else if (strncmp(argv[a], "find:", 5) == 0)
            d = sqle_dialect_find(argv[a] + 5);
        else if (strcmp(argv[a], "detect-null") == 0)
            d = sqle_dialect_detect(NULL);
        else
            d = NULL;
        printf("Q %s => %s\n", argv[a], d ? d->key : "NULL");
    }
    return 0;
}
"""


def probe_c():
    """PROBE_C with a stmt() line for every statement and predicate this
    file expects (STATEMENTS, FRAGMENTS): a statement the generator drops
    fails its compile."""
    lines = "\n".join('        stmt(d->key, "%s", &d->%s);' % (st, st)
                      for st in STATEMENTS + FRAGMENTS)
    return PROBE_C.replace("@STMTS@", lines)


def toml_value(v):
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a valid TOML basic string
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{ " + ", ".join("%s = %s" % (k, toml_value(x)) for k, x in v.items()) + " }"
    return str(v)


def dump_toml(rows):
    out = []
    for key, row in rows.items():
        out.append("[%s]" % key)
        for field, value in row.items():
            out.append("%s = %s" % (field, toml_value(value)))
        out.append("")
    return "\n".join(out)


def template_text():
    with open(TEMPLATE, encoding="utf-8") as f:
        return f.read()


def real_rows():
    with open(TEMPLATE, "rb") as f:
        return tomllib.load(f)


def real_keys():
    """The keys of the table's dialect rows, sorted (the generator's
    order)."""
    return sorted(k for k in real_rows() if k != "common")


def doc_row(block):
    """(key, row) of a TOML block of docs/adding-a-dialect.md, by its
    name (tests/docblocks.py): the document's examples are what the tests
    here generate."""
    import docblocks
    blocks, _ = docblocks.all_blocks(ROOT)
    rows = tomllib.loads(blocks[block].text)
    assert len(rows) == 1, rows
    return next(iter(rows.items()))


def header_limit(name):
    """A #define of include/sqlease.h (SQLEASE_MAX_NAME, ...)."""
    with open(os.path.join(INCLUDE, "sqlease.h"), encoding="utf-8") as f:
        m = re.search(r"^#define %s (\d+)" % name, f.read(), re.M)
    return int(m.group(1))


def as_sql(snippet):
    """A snippet as it reads in generated SQL: whitespace outside quotes
    collapsed, :param as ?."""
    return re.sub(r":[a-z_]+", "?", " ".join(snippet.split()))


def checked(test, keys):
    """Say which rows a per-row test checked (the test's output names a
    new row as soon as it is in the table)."""
    sys.stderr.write("\n%s: checked rows %s\n" % (test, ", ".join(keys)))


class GenCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sqlease-test-gen-")
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)

    def gen(self, text=None, path=REL, outdir="out"):
        """Run the generator in self.tmp on `text` (default: the real
        template) written at `path`; return the CompletedProcess."""
        if not os.path.isabs(path):
            full = os.path.join(self.tmp, path)
        else:
            full = path
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if text is None:
            shutil.copyfile(TEMPLATE, full)
        else:
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        out = os.path.join(self.tmp, outdir)
        return subprocess.run(
            [sys.executable, GEN, path, os.path.join(outdir, "dialects.c"),
             os.path.join(outdir, "dialects.h")],
            cwd=self.tmp, capture_output=True, text=True)

    def probe(self, outdir="out", queries=()):
        """Compile the generated C with a probe program; run it."""
        out = os.path.join(self.tmp, outdir)
        with open(os.path.join(out, "probe.c"), "w") as f:
            f.write(probe_c())
        exe = os.path.join(out, "probe")
        cc = subprocess.run([CC] + CFLAGS + ["-I", out, "-I", SRC, "-o", exe,
                                             os.path.join(out, "dialects.c"), DIALECT_C,
                                             os.path.join(out, "probe.c")],
                            capture_output=True, text=True)
        self.assertEqual(cc.returncode, 0, "compile failed:\n" + cc.stderr)
        self.assertEqual(cc.stderr, "", "compiler warnings:\n" + cc.stderr)
        run = subprocess.run([exe] + list(queries), capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        return run.stdout

    def failures(self, probe_out):
        res = {}
        for line in probe_out.splitlines():
            if line.startswith("F "):
                _, key, name, item = line.split(" ", 3)
                res.setdefault((key, name), []).append(item)
        return res

    def nows(self, probe_out):
        """T lines: key -> the row's now_ms as generated."""
        return dict(line[2:].split(" ", 1) for line in probe_out.splitlines()
                    if line.startswith("T "))

    def statements(self, probe_out):
        res = {}
        for line in probe_out.splitlines():
            if line.startswith("S "):
                _, key, name, q, params, sql = line.split(" ", 5)
                plist = [int(x) for x in params.strip("[]").split(",") if x]
                res[(key, name)] = (int(q), plist, sql)
        return res

    def batched(self, probe_out):
        """E lines: (key, name) -> (markers, params, sql for 3 leases);
        sql None for a statement the dialect does not have."""
        res = {}
        for line in probe_out.splitlines():
            if line.startswith("E "):
                _, key, name, q, params, sql = line.split(" ", 5)
                plist = [int(x) for x in params.strip("[]").split(",") if x]
                res[(key, name)] = (int(q), plist, None if sql == "-" else sql)
        return res

    def assertRejected(self, text, *fragments):
        r = self.gen(text)
        self.assertEqual(r.returncode, 1, "expected exit 1, got %d; stderr:\n%s"
                         % (r.returncode, r.stderr))
        for frag in fragments:
            self.assertIn(frag, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "out", "dialects.c")),
                         "output written despite an error")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "out", "dialects.h")),
                         "output written despite an error")
        return r.stderr


# What the shipped rows send, every statement as the probe prints it
# (markers, parameters, SQL; the batched ones for 3 leases) and their
# limits, as a SHA-256: a change that only restructures the table (a
# statement moved to [common], a snippet instead of a copied phrase) must
# leave it as it is.  A change meant to change the SQL updates it, once
# gen/diff_generated.py has named the statements that changed.
SHIPPED_ROWS = ("mysql", "postgres", "sqlite", "sqlserver")
SHIPPED_SQL_SHA256 = "bd267b20dcb832f3c97ae687c8af55f7cc390742382f7219effb77176672b0e2"


def shipped_sql(probe_out):
    """The probe's S, E and B lines of the shipped rows, sorted."""
    return sorted(line for line in probe_out.splitlines()
                  if line[:2] in ("S ", "E ", "B ") and line.split(" ", 2)[1] in SHIPPED_ROWS)


class RealTemplate(GenCase):
    def test_shipped_sql_unchanged(self):
        r = self.gen()
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = shipped_sql(self.probe())
        self.assertEqual({line.split(" ", 2)[1] for line in lines}, set(SHIPPED_ROWS))
        digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
        self.assertEqual(digest, SHIPPED_SQL_SHA256,
                         "the SQL of the shipped rows changed (gen/diff_generated.py names "
                         "the statements); if that is meant, update SHIPPED_SQL_SHA256")

    def test_generates_and_compiles_warning_free(self):
        r = self.gen()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        out = os.path.join(self.tmp, "out")
        cc = subprocess.run([CC] + CFLAGS + ["-fsyntax-only", "-I", out,
                                             os.path.join(out, "dialects.c")],
                            capture_output=True, text=True)
        self.assertEqual(cc.returncode, 0, cc.stderr)
        self.assertEqual(cc.stderr, "")

    def test_detect_find_keys(self):
        self.assertEqual(self.gen().returncode, 0)
        rows = real_rows()
        keys = real_keys()
        # Every row by its key and each alias, and by each of its DBMS
        # names, as a driver decorates it; detection takes the first row
        # in key order one of whose names the reported name contains.
        queries = []
        for key in keys:
            queries.append("find:" + key)
            queries += ["find:" + a for a in rows[key].get("aliases", [])]
            for n in rows[key]["dbms_names"]:
                queries += ["detect:" + n, "detect:%s 9.1" % n.lower()]
        # The rows that ship: what their servers report picks them.
        shipped = {
            "detect:PostgreSQL 15.4": "postgres",
            "detect:MariaDB": "mysql",
            "detect:MySQL": "mysql",
            "detect:mysql 8.0": "mysql",
            "detect:SQLite": "sqlite",
            "detect:Microsoft SQL Server": "sqlserver",
            "detect:microsoft sql server 2019": "sqlserver",
            "detect:NoSuchDBMS 1.0": "NULL",
            "detect:": "NULL",
            "detect-null": "NULL",
            "find:sqlite": "sqlite",
            "find:postgres": "postgres",
            "find:mysql": "mysql",
            "find:sqlserver": "sqlserver",
            "find:SQLite": "NULL",
            "find:nope": "NULL",
            "find:": "NULL",
            "find:common": "NULL",
        }
        out = self.probe(queries=queries + list(shipped))
        answers = dict(line[2:].split(" => ") for line in out.splitlines()
                       if line.startswith("Q "))

        def detected(name):
            for key in keys:
                if any(n.lower() in name.lower() for n in rows[key]["dbms_names"]):
                    return key
            return "NULL"

        for key in keys:
            with self.subTest(row=key):
                self.assertEqual(answers["find:" + key], key)
                for a in rows[key].get("aliases", []):
                    self.assertEqual(answers["find:" + a], key)
                for n in rows[key]["dbms_names"]:
                    self.assertEqual(answers["detect:" + n], detected(n))
                    self.assertEqual(answers["detect:%s 9.1" % n.lower()],
                                     detected(n.lower() + " 9.1"))
        self.assertEqual({q: answers[q] for q in shipped}, shipped)
        self.assertIn("K " + ", ".join(keys), out.splitlines())
        self.assertIn("N %d" % len(keys), out.splitlines())
        checked("test_detect_find_keys", keys)

    def test_statements(self):
        self.assertEqual(self.gen().returncode, 0)
        out = self.probe()
        stmts = self.statements(out)
        nows = self.nows(out)
        rows = real_rows()
        keys = real_keys()
        name, owner, ttl, token, min_hold, data = 0, 1, 2, 3, 4, 5
        widths = [header_limit(n) for n in ("SQLEASE_MAX_NAME", "SQLEASE_MAX_OWNER",
                                            "SQLEASE_MAX_DATA")]
        for key in keys:
            with self.subTest(row=key):
                self.check_row_statements(key, own_or_common(rows, key), stmts, nows[key],
                                          widths)
        checked("test_statements", keys)
        # The column widths are sqlease.h's, written once, in [common]'s
        # snippets.
        for field, width in zip(("name_type", "owner_type", "data_type"), widths):
            self.assertIn("(%d)" % width, rows["common"][field])
        # {now} pasted in at generation time
        self.assertIn("clock_timestamp()", stmts[("postgres", "acquire")][2])
        # PostgreSQL reads its volatile clock once per statement, in FROM,
        # also in the release.
        self.assertEqual(stmts[("postgres", "release")][2].count("clock_timestamp()"), 1)
        self.assertIn("julianday('now')", stmts[("sqlite", "now")][2])
        self.assertIn("UTC_TIMESTAMP(6)", stmts[("mysql", "status")][2])
        self.assertIn("julianday('now')", stmts[("sqlite", "seed")][2])
        # Exact comparisons where `=` pads: the rows' snippets, inherited.
        self.assertIn("CHAR_LENGTH(owner) = CHAR_LENGTH(?)", stmts[("mysql", "release")][2])
        self.assertIn("DATALENGTH(owner) = DATALENGTH(?)", stmts[("sqlserver", "release")][2])
        self.assertIn("utf8mb4_bin", stmts[("mysql", "create_table")][2])
        self.assertIn("data VARCHAR(1024) CHARACTER SET utf8mb4 NULL",
                      stmts[("mysql", "add_data")][2])
        self.assertIn("_BIN2", stmts[("sqlserver", "create_table")][2])
        self.assertEqual(stmts[("sqlserver", "add_data")][2],
                         "ALTER TABLE {table} ADD data VARCHAR(1024) NULL")
        self.assertIn("D sqlserver setup=1 literal=0", out)
        self.assertIn("D postgres setup=0 literal=1", out)
        self.assertIn("D mysql setup=0 literal=2", out)
        self.assertIn("D sqlite setup=0 literal=0", out)
        # The classifier's rules: [common]'s, and each dialect's own on top.
        rules = self.failures(out)
        self.assertEqual(rules[("[common]", "missing_table_sqlstates")], ["42S02"])
        self.assertEqual(rules[("[common]", "connection_lost_sqlstates")], ["08"])
        self.assertEqual(rules[("[common]", "timeout_sqlstates")], ["HYT00", "HYT01"])
        self.assertEqual(rules[("postgres", "missing_table_sqlstates")], ["42P01"])
        self.assertEqual(rules[("postgres", "timeout_sqlstates")], ["57014"])
        self.assertEqual(rules[("postgres", "missing_table_messages")], ["does not exist"])
        self.assertEqual(rules[("mysql", "missing_table_messages")], ["doesn't exist"])
        self.assertEqual(rules[("sqlite", "missing_table_messages")], ["no such table"])
        self.assertEqual(rules[("sqlite", "locked_messages")], ["database is locked"])
        self.assertEqual(rules[("postgres", "privilege_sqlstates")], ["42501"])
        self.assertEqual(rules[("mysql", "privilege_messages")],
                         ["command denied to user", "access denied"])
        self.assertNotIn(("[common]", "privilege_sqlstates"), rules)
        self.assertEqual(rules[("sqlserver", "missing_table_messages")], ["Invalid object name"])
        self.assertNotIn(("mysql", "missing_table_sqlstates"), rules)
        # The fence: exact where `=` pads (each value and its length), the
        # clock read once on PostgreSQL (in FROM, like the take).
        self.assertEqual(stmts[("mysql", "fence")][1], [name, name, owner, owner, token])
        self.assertEqual(stmts[("sqlserver", "fence")][1], [name, name, owner, owner, token])
        self.assertEqual(stmts[("postgres", "fence")][1], [name, owner, token])
        self.assertEqual(stmts[("sqlite", "fence")][1], [name, owner, token])
        self.assertEqual(stmts[("postgres", "fence")][2].count("clock_timestamp()"), 1)
        self.assertIn("expires_at_ms > c.now_ms", stmts[("postgres", "fence")][2])
        # psqlODBC writes a bound value as an untyped literal: the exit
        # status's CASE casts, or it would be text.
        for st in ("fire_end", "fire_done"):
            self.assertIn("THEN CAST(? AS INTEGER) ELSE NULL END", stmts[("postgres", st)][2])
        # PostgreSQL reads its clock once in every statement of the fire
        # ledger and in the take of a fire, as in the lease's.
        for st in ["take_fire"] + FIRE_STATEMENTS:
            self.assertLessEqual(stmts[("postgres", st)][2].count("clock_timestamp()"), 1, st)
        # The claim, exact where `=` pads (each value and its length).
        job, fire_at, host = P["job"], P["fire_at_ms"], P["host"]
        self.assertEqual(stmts[("mysql", "fire_claim")][1],
                         [job, fire_at, host, name, name, owner, owner, token, fire_at])
        self.assertEqual(stmts[("sqlite", "fire_claim")][1],
                         [job, fire_at, host, name, owner, token, fire_at])
        self.assertEqual(stmts[("sqlserver", "fire_claim")][1],
                         [job, fire_at, host, name, name, owner, owner, token, fire_at,
                          name, name, job, job, fire_at])
        self.assertIn("job = ? AND CHAR_LENGTH(job) = CHAR_LENGTH(?)",
                      stmts[("mysql", "fire_end")][2])
        self.assertIn("job = ? AND DATALENGTH(job) = DATALENGTH(?)",
                      stmts[("sqlserver", "fire_end")][2])
        self.assertIn("job VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL",
                      stmts[("mysql", "fire_create_table")][2])
        self.assertTrue(stmts[("sqlserver", "fire_create_table")][2].startswith(
            "IF OBJECT_ID(N'{fire_table}', N'U') IS NULL CREATE TABLE {fire_table} ("))
        self.assertTrue(stmts[("mysql", "fire_claim")][2].startswith("INSERT IGNORE INTO"))
        # The status reads end with the row's last claimed fire.
        self.assertIn("l.last_owner, l.fire_at_ms, l.handoff_to, l.priority FROM",
                      self.batched(out)[("sqlserver", "status_each")][2])
        # PostgreSQL reads its clock once in the hand-over's statements.
        for st in HANDOFF_STATEMENTS:
            self.assertLessEqual(stmts[("postgres", st)][2].count("clock_timestamp()"), 1, st)

    def check_row_statements(self, key, row, stmts, now, widths):
        """What every row's statements must get right, whatever the DBMS.
        `row`: its fields, its own or [common]'s; `now`: its clock as
        generated."""
        name, owner, ttl, token, min_hold, data = 0, 1, 2, 3, 4, 5
        for st in STATEMENTS + FRAGMENTS:
            q, params, sql = stmts[(key, st)]
            self.assertEqual(q, len(params), "%s.%s: ? count != nparams" % (key, st))
            self.assertNotIn("{now}", sql)
            self.assertNotIn(":owner", sql)
            self.assertNotIn(":name", sql)
            self.assertEqual(sql, sql.strip())
            # The tables it names, and no other: the library substitutes
            # only the ones it expects.
            lease = st != "now" and (st not in FIRE_STATEMENTS or st in FIRE_FENCED) and \
                (st not in HOLD_STATEMENTS or st in HOLD_FROM_LEASE)
            self.assertEqual("{table}" in sql, lease, "%s.%s" % (key, st))
            self.assertEqual("{fire_table}" in sql, st in FIRE_STATEMENTS, "%s.%s" % (key, st))
            self.assertEqual("{history_table}" in sql, st in HOLD_STATEMENTS,
                             "%s.%s" % (key, st))
        # The clock, read alone.
        self.assertIn(now, stmts[(key, "now")][2], key)
        # The take is bound to the token the follower's read saw (it
        # makes token + 1) and writes the data; the renew and the
        # release are scoped to (name, owner, token).  The release
        # keeps the row until acquired_at + min_hold: the minimum hold
        # is bound in the CASEs (owner, expiry, data) and in the expiry
        # it writes.
        self.assertEqual(set(stmts[(key, "acquire")][1]),
                         {name, owner, ttl, token, data, P["priority"]}, key)
        self.assertEqual(set(stmts[(key, "renew")][1]), {name, owner, ttl, token}, key)
        # The followers' reads carry the version they watch, then the
        # holder's ttl (what a watch waits) and who held the row last.
        self.assertTrue(stmts[(key, "status")][2].split(" FROM {table}")[0].endswith(
            "version, ttl_ms, last_owner, fire_at_ms, handoff_to, priority"), key)
        self.assertEqual(set(stmts[(key, "release")][1]),
                         {name, owner, token, min_hold}, key)
        # min_hold > 0 AND acquired_at + min_hold > now, in three CASEs, and
        # the expiry it keeps: a hold without one is always freed.
        self.assertEqual(stmts[(key, "release")][1].count(min_hold), 9, key)
        self.assertIn("acquired_at_ms + ? > ", stmts[(key, "release")][2], key)
        self.assertEqual(set(stmts[(key, "release_force")][1]), {name}, key)
        self.assertEqual(set(stmts[(key, "status")][1]), {name}, key)
        self.assertEqual(stmts[(key, "list")][1], [name], key)
        self.assertIn("ORDER BY name", stmts[(key, "list")][2], key)
        self.assertEqual(set(stmts[(key, "fence")][1]), {name, owner, token}, key)
        self.assertTrue(stmts[(key, "fence")][2].startswith("EXISTS ("), key)
        self.assertNotIn(";", stmts[(key, "fence")][2], key)
        # Names and owners compare as exact bytes: every statement that
        # finds a hold compares them as the row's snippets say (a row
        # whose `=` pads sets them, and its own statements use them too).
        for st in ("acquire", "renew", "release", "release_force", "status", "fence"):
            self.assertIn(as_sql(row["name_equals"]), stmts[(key, st)][2], "%s.%s" % (key, st))
        for st in ("renew", "release", "fence"):
            self.assertIn(as_sql(row["owner_equals"]), stmts[(key, st)][2],
                          "%s.%s" % (key, st))
        self.assertIn(as_sql(row["owner_free"]), stmts[(key, "acquire")][2], key)
        # data: written by the take, read back, cleared by a release,
        # and added to an older table by migrate.
        self.assertEqual(stmts[(key, "acquire")][1].count(data), 1, key)
        self.assertIn("ELSE NULL END", stmts[(key, "release")][2], key)
        self.assertIn("data = NULL", stmts[(key, "release_force")][2], key)
        self.assertNotIn("data", stmts[(key, "renew")][2], key)
        for st in ("status", "list"):
            self.assertIn(", data, version, ttl_ms, last_owner, fire_at_ms, handoff_to, "
                          "priority FROM", stmts[(key, st)][2], "%s.%s" % (key, st))
        # The columns as wide as sqlease.h says (SQLEASE_MAX_NAME, ...).
        for width in widths:
            self.assertIn("(%d)" % width, stmts[(key, "create_table")][2], key)
        self.assertIn("data " + as_sql(row["data_type"]), stmts[(key, "create_table")][2], key)
        self.assertIn("data " + as_sql(row["data_type"]), stmts[(key, "add_data")][2], key)
        # The owner it writes, and the one the reservation's guard
        # compares handoff_to with (check_row_handoff).
        self.assertEqual(stmts[(key, "acquire")][1].count(owner),
                         1 + as_sql(row["handoff_owner"]).count("?"), key)
        self.assertEqual(stmts[(key, "probe_exact")][1], [], key)
        # An older table's NULLs become a new row's values, a NULL
        # token the clock (as the seed's), and only rows with a NULL
        # are touched.
        fill = stmts[(key, "fill_nulls")][2]
        self.assertEqual(stmts[(key, "fill_nulls")][1], [], key)
        self.assertTrue(fill.startswith("UPDATE {table} SET"), key)
        for col, value in (("owner", "''"), ("acquired_at_ms", "0"),
                           ("expires_at_ms", "0")):
            self.assertIn("%s = COALESCE(%s, %s)" % (col, col, value), fill, key)
            self.assertIn("%s IS NULL" % col, fill, key)
        self.assertIn("token IS NULL", fill, key)
        self.assertIn("version IS NULL", fill, key)
        self.assertIn("token = COALESCE(token, " + now + ")", fill, key)
        # ... and, as every write, it changes the version (a NULL one
        # starts from the clock, as a token does): a follower that read the
        # NULL, or a number before it, starts over.
        self.assertIn("version = COALESCE(version, " + now + ") + 1", fill, key)
        # The repair of one row whose read showed a NULL: the same, for
        # that name only.
        repair = stmts[(key, "repair")][2]
        self.assertEqual(set(stmts[(key, "repair")][1]), {name}, key)
        self.assertTrue(repair.startswith("UPDATE {table} SET"), key)
        self.assertIn(as_sql(row["name_equals"]), repair, key)
        self.assertIn("version = COALESCE(version, " + now + ") + 1", repair, key)
        self.assertIn("token = COALESCE(token, " + now + ")", repair, key)
        # Every statement that changes a row changes its version, also
        # from NULL; the takes write the holder's ttl (a watch waits it),
        # the releases keep who held the row, reading the owner before
        # they change it (MySQL assigns left to right).
        for st in ("acquire", "take_watched", "renew", "release", "release_force"):
            sql = stmts[(key, st)][2]
            self.assertRegex(sql, r"version = COALESCE\((\w+\.)?version, (%s|c\.now_ms)\) \+ 1"
                             % re.escape(now), st)
        for st in ("acquire", "take_watched"):
            self.assertIn("ttl_ms = ?", stmts[(key, st)][2], "%s.%s" % (key, st))
        for st in ("release", "release_force"):
            sql = stmts[(key, st)][2]
            self.assertRegex(sql, r"^UPDATE \{table\} SET last_owner = ", st)
            self.assertIn("ttl_ms = ", sql, st)
        self.assertIn("ttl_ms BIGINT NOT NULL DEFAULT 0", stmts[(key, "create_table")][2], key)
        self.assertIn("ttl_ms BIGINT NOT NULL DEFAULT 0", stmts[(key, "add_ttl")][2], key)
        self.assertIn("last_owner " + as_sql(row["owner_type"]),
                      stmts[(key, "create_table")][2], key)
        self.assertIn("last_owner " + as_sql(row["owner_type"]),
                      stmts[(key, "add_last_owner")][2], key)
        # The take also reads a NULL owner or expiry as free.
        self.assertIn("owner IS NULL", stmts[(key, "acquire")][2], key)
        self.assertIn("expires_at_ms IS NULL", stmts[(key, "acquire")][2], key)
        self.assertEqual(stmts[(key, "make_exact")][1], [], key)
        # A new row's token is seeded from the database clock.
        self.assertNotIn("0, 0, 0, 0)", stmts[(key, "seed")][2], key)
        self.assertIn(now, stmts[(key, "seed")][2], key)
        self.assertEqual(stmts[(key, "now")][1], [], key)
        self.assertEqual(stmts[(key, "create_table")][1], [], key)
        self.check_row_take_fire(key, row, stmts, now)
        self.check_row_fire(key, row, stmts, now)
        self.check_row_handoff(key, row, stmts, now)
        self.check_row_history(key, row, stmts, now)

    def check_row_handoff(self, key, row, stmts, now):
        """The hand-over (see the template's header): its columns, the
        renew that a request refuses, the takes that refuse a reserved
        row to any owner but its target and clear the request, and the
        request, its withdrawal, the hand-over and the ready rows' read,
        with the exact comparisons through the row's snippets."""
        name_eq, owner_eq = as_sql(row["name_equals"]), as_sql(row["owner_equals"])
        free, none = as_sql(row["owner_free"]), as_sql(row["no_handoff"])
        mine, target = as_sql(row["handoff_owner"]), as_sql(row["handoff_target"])
        clock = r"(c\.now_ms|%s)" % re.escape(now)
        # A row whose clock is volatile reads it once, in FROM (PostgreSQL).
        once = r"(FROM \(SELECT %s AS now_ms\) AS c )?" % re.escape(now)
        # The columns: handoff_to compares as the owner does.
        coll = as_sql(row["exact_collation"])
        column = " ".join(("handoff_to", as_sql(row["owner_type"])) + ((coll,) if coll else ())
                          + ("NOT NULL DEFAULT ''",))
        for st in ("create_table", "add_handoff_to"):
            self.assertIn(column, stmts[(key, st)][2], "%s.%s" % (key, st))
        for st in ("create_table", "add_priority"):
            self.assertIn("priority BIGINT NOT NULL DEFAULT 0", stmts[(key, st)][2],
                          "%s.%s" % (key, st))
        for st in ("probe_handoff_to", "probe_priority", "add_handoff_to", "add_priority"):
            self.assertEqual(stmts[(key, st)][1], [], "%s.%s" % (key, st))
        # The renew matches only a hold with no request.
        self.assertTrue(stmts[(key, "renew")][2].endswith(" AND " + none), key)
        # Every take refuses a row reserved for another owner until its
        # deadline, clears handoff_to and writes its priority.
        guard = re.compile(r"AND \(NOT \(%s\) OR %s OR %s OR expires_at_ms <= %s\)"
                           % (re.escape(free), re.escape(none), re.escape(mine), clock))
        for st in ("acquire", "take_watched", "take_fire"):
            sql, params = stmts[(key, st)][2], stmts[(key, st)][1]
            self.assertRegex(sql, guard, "%s.%s" % (key, st))
            self.assertIn("handoff_to = '', priority = ?", sql.split(" WHERE ")[0],
                          "%s.%s" % (key, st))
            self.assertEqual(params.count(P["priority"]), 1, "%s.%s" % (key, st))
        # The releases clear a request: the hold it was about is over.
        for st in ("release", "release_force"):
            self.assertIn("handoff_to = '',", stmts[(key, st)][2].split(" WHERE ")[0],
                          "%s.%s" % (key, st))
        ps = {st: {n for n, v in P.items() if v in stmts[(key, st)][1]}
              for st in HANDOFF_STATEMENTS}
        sql = {st: stmts[(key, st)][2] for st in HANDOFF_STATEMENTS}
        # A request: the hold as read, live, with no request yet, and (a
        # preemption's) as old as :min_hold_ms on the database's clock.
        self.assertEqual(ps["handoff_request"],
                         {"name", "owner", "token", "target", "min_hold_ms"}, key)
        self.assertRegex(sql["handoff_request"],
                         r"^UPDATE \{table\} SET handoff_to = \?, version = COALESCE\(version, "
                         r"%s\) \+ 1 %sWHERE %s AND %s AND token = \? AND %s AND "
                         r"expires_at_ms > %s AND \(\? <= 0 OR acquired_at_ms \+ \? <= %s\)$"
                         % (clock, once, re.escape(name_eq), re.escape(owner_eq), re.escape(none),
                            clock, clock),
                         key)
        # Its withdrawal: that request on that hold.
        self.assertEqual(ps["handoff_cancel"], {"name", "owner", "token", "target"}, key)
        self.assertRegex(sql["handoff_cancel"],
                         r"^UPDATE \{table\} SET handoff_to = '', version = COALESCE\(version, "
                         r"%s\) \+ 1 WHERE " % clock, key)
        self.assertTrue(sql["handoff_cancel"].endswith(
            "%s AND %s AND token = ? AND %s" % (name_eq, owner_eq, target)), key)
        # The hand-over: scoped to the hold as a release is, whatever its
        # expiry; the row free, reserved for the target until the clock
        # plus the reservation, the token kept, last_owner read first
        # (MySQL assigns left to right), the version changed.
        self.assertEqual(ps["handoff"], {"name", "owner", "token", "target", "reserve_ms"}, key)
        self.assertRegex(sql["handoff"],
                         r"^UPDATE \{table\} SET last_owner = owner, owner = '', handoff_to = "
                         r"\?, expires_at_ms = %s \+ \?, ttl_ms = 0, data = NULL, priority = 0, "
                         r"version = COALESCE\(version, %s\) \+ 1 %sWHERE %s AND %s AND "
                         r"token = \?$" % (clock, clock, once, re.escape(name_eq),
                                            re.escape(owner_eq)), key)
        self.assertNotIn("token = token", sql["handoff"], key)
        # The ready rows: every row whose name starts with the prefix,
        # with the status read's columns after the name.
        self.assertEqual(ps["ready_list"], {"prefix"}, key)
        self.assertIn(as_sql(row["name_prefix"]), sql["ready_list"], key)
        self.assertRegex(sql["ready_list"],
                         r"^SELECT name, owner, token, acquired_at_ms, expires_at_ms, %s, data, "
                         r"version, ttl_ms, last_owner, fire_at_ms, handoff_to, priority FROM "
                         r"\{table\}" % clock, key)
        self.assertTrue(sql["ready_list"].endswith(" ORDER BY name"), key)

    def check_row_take_fire(self, key, row, stmts, now):
        """The lease row's last claimed fire: its column, and the take that
        claims a fire (run --schedule)."""
        self.assertIn("fire_at_ms BIGINT NOT NULL DEFAULT 0", stmts[(key, "create_table")][2],
                      key)
        self.assertIn("fire_at_ms BIGINT NOT NULL DEFAULT 0", stmts[(key, "add_fire_at")][2],
                      key)
        self.assertEqual(stmts[(key, "probe_fire_at")][1], [], key)
        q, params, sql = stmts[(key, "take_fire")]
        # acquire's take, bound to the token read, by the expiry ...
        acquire = stmts[(key, "acquire")]
        self.assertEqual(set(params), set(acquire[1]) | {P["fire_at_ms"]}, key)
        self.assertEqual(params.count(P["token"]), 1, key)
        self.assertIn(as_sql(row["name_equals"]) + " AND token = ?", sql, key)
        self.assertIn(as_sql(row["owner_free"]) + " OR owner IS NULL", sql, key)
        self.assertRegex(sql, r"expires_at_ms <= ", key)
        self.assertRegex(sql, r"version = COALESCE\(version, (%s|c\.now_ms)\) \+ 1"
                         % re.escape(now), key)
        self.assertIn("token = token + 1", sql, key)
        self.assertIn("ttl_ms = ?", sql, key)
        # ... that writes the fire and requires the row's last one before it.
        self.assertEqual(params.count(P["fire_at_ms"]), 2, key)
        self.assertIn("fire_at_ms = ?", sql.split(" WHERE ")[0], key)
        self.assertIn("COALESCE(fire_at_ms, 0) < ?", sql.split(" WHERE ")[1], key)
        # No other statement changes the fire a take claimed: a release,
        # even a forced one, never lets a fire run twice.
        for st in ("acquire", "take_watched", "renew", "release", "release_force", "repair",
                   "fill_nulls"):
            self.assertNotIn("fire_at_ms", stmts[(key, st)][2], "%s.%s" % (key, st))

    def check_row_history(self, key, row, stmts, now):
        """The holder history's statements, whatever the DBMS: their
        parameters, exact comparisons through the row's snippets, the new
        hold's row read from the lease row while it shows that hold, and
        no end ever written over another."""
        name_eq, owner_eq = as_sql(row["name_equals"]), as_sql(row["owner_equals"])
        params = {st: stmts[(key, st)][1] for st in HOLD_STATEMENTS}
        sql = {st: stmts[(key, st)][2] for st in HOLD_STATEMENTS}
        ps = {st: {n for n, v in P.items() if v in params[st]} for st in HOLD_STATEMENTS}
        self.assertEqual(ps["hold_create_table"], set(), key)
        # The take's row; a row that binds the end there closes the hold
        # before it in the same statement (PostgreSQL).
        closes = "ended_at_ms" in ps["hold_start"]
        self.assertEqual(ps["hold_start"], {"name", "owner", "token", "host", "pid"}
                         | ({"ended_at_ms"} if closes else set()), key)
        self.assertEqual(ps["hold_expire"], {"name", "token", "ended_at_ms"}, key)
        self.assertEqual(ps["hold_end"], {"name", "token", "state"}, key)
        self.assertEqual(ps["hold_force"], {"name", "token"}, key)
        self.assertEqual(ps["hold_list"], {"name", "since_ms", "before_ms"}, key)
        self.assertEqual(ps["hold_prune"], {"name", "since_ms", "before_ms"}, key)
        create = sql["hold_create_table"]
        self.assertIn("PRIMARY KEY (name, token)", create, key)
        self.assertRegex(create, r"\bname %s %s NOT NULL" % (re.escape(as_sql(row["name_type"])),
                                                             re.escape(row["exact_collation"]))
                         if row["exact_collation"] else
                         r"\bname %s NOT NULL" % re.escape(as_sql(row["name_type"])), key)
        for col in ("token BIGINT NOT NULL", "pid BIGINT NOT NULL DEFAULT 0",
                    "started_at_ms BIGINT NOT NULL", "ended_at_ms BIGINT NOT NULL DEFAULT 0",
                    "ended %s NOT NULL DEFAULT ''" % as_sql(row["state_type"])):
            self.assertIn(col, create, key)
        # The new hold's row: from the lease row while it shows the hold
        # (name, owner, token), started when the take wrote, open.
        start = sql["hold_start"]
        self.assertIn("SELECT name, token, owner, ?, ?, acquired_at_ms, 0, '' FROM {table} "
                      "WHERE %s AND %s AND token = ?" % (name_eq, owner_eq), start, key)
        self.assertNotIn("ON DUPLICATE KEY", start, key)
        guards = (start.endswith("ON CONFLICT (name, token) DO NOTHING"),
                  start.startswith("INSERT IGNORE INTO {history_table}"),
                  "NOT EXISTS (SELECT 1 FROM {history_table} WITH (UPDLOCK, HOLDLOCK) WHERE "
                  "%s AND token = ?)" % name_eq in start)
        self.assertEqual(sum(guards), 1, "%s.hold_start: %s" % (key, start))
        if closes:
            # The close of the hold before: only when the take asks for
            # it, only that token, never an end already written.
            self.assertRegex(start, r"ended = 'expired', ended_at_ms = \? WHERE "
                             r"(\?|CAST\(\? AS BIGINT\)) > 0 AND %s AND token \+ 1 = \? "
                             r"AND ended_at_ms = 0" % re.escape(name_eq), key)
        # Every end: one hold (name, token) of the row's snippets, written
        # only while the row has none.
        for st in ("hold_expire", "hold_end"):
            self.assertTrue(sql[st].startswith("UPDATE {history_table} SET ended = "), key)
        self.assertTrue(sql["hold_expire"].endswith(
            "WHERE %s AND token = ? AND ended_at_ms = 0" % name_eq), key)
        self.assertIn("ended = 'expired', ended_at_ms = ? ", sql["hold_expire"], key)
        # The holder's end: now, or the next hold's start (token + 1 in
        # the lease row) if that came first; nothing once a later hold
        # than that began.
        self.assertIn("ended = ?, ended_at_ms = COALESCE((SELECT acquired_at_ms FROM {table} "
                      "WHERE %s AND token - 1 = ? AND acquired_at_ms < %s), %s) "
                      % (name_eq, now, now), sql["hold_end"], key)
        self.assertTrue(sql["hold_end"].endswith(
            "WHERE %s AND token = ? AND ended_at_ms = 0 AND NOT EXISTS (SELECT 1 FROM {table} "
            "WHERE %s AND token - 1 > ?)" % (name_eq, name_eq)), key)
        force = sql["hold_force"]
        self.assertIn("ended = 'forced', ended_at_ms = %s " % now, force, key)
        # Scoped to the hold the operator read before the force, and only
        # while the freed row keeps that token.
        self.assertTrue(force.endswith(
            "WHERE %s AND token = ? AND ended_at_ms = 0 AND ? = (SELECT token FROM {table} "
            "WHERE %s AND %s)" % (name_eq, name_eq, as_sql(row["owner_free"]))), key)
        # The list: newest first, each with the end of the hold before it.
        lst = sql["hold_list"]
        self.assertTrue(lst.startswith(
            "SELECT name, token, owner, host, pid, started_at_ms, ended_at_ms, ended, (SELECT "
            "p.ended_at_ms FROM {history_table} p WHERE p.name = h.name AND "
            "p.token = h.token - 1) FROM {history_table} h WHERE "), key)
        self.assertIn("(? = '' OR (%s))" % name_eq, lst, key)
        self.assertTrue(lst.endswith("AND started_at_ms >= ? AND started_at_ms < ? "
                                     "ORDER BY started_at_ms DESC, name, token DESC"), key)
        prune = sql["hold_prune"]
        self.assertTrue(prune.startswith("DELETE FROM {history_table} WHERE %s AND " % name_eq),
                        key)
        self.assertTrue(prune.endswith("AND started_at_ms >= ? AND started_at_ms < ? AND "
                                       "ended_at_ms <> 0"), key)
        # Nothing of the history changes the lease row.
        for st in HOLD_STATEMENTS:
            self.assertNotRegex(sql[st], r"^UPDATE \{table\}", "%s.%s" % (key, st))
            self.assertNotIn("UPDATE {table}", sql[st], "%s.%s" % (key, st))

    def check_row_fire(self, key, row, stmts, now):
        """The fire ledger's statements, whatever the DBMS: their
        parameters, the exact comparisons through the row's snippets, the
        fence of the fenced ones, and the insert that leaves a fire that
        has a row alone."""
        name_eq, owner_eq = as_sql(row["name_equals"]), as_sql(row["owner_equals"])
        job_eq = as_sql(row["job_equals"])
        fence = "%s AND %s AND token = ?" % (name_eq, owner_eq)
        params = {st: stmts[(key, st)][1] for st in FIRE_STATEMENTS}
        sql = {st: stmts[(key, st)][2] for st in FIRE_STATEMENTS}
        ps = {st: {n for n, v in P.items() if v in params[st]} for st in FIRE_STATEMENTS}
        self.assertEqual(ps["fire_create_table"], set(), key)
        self.assertEqual(ps["fire_claim"], {"name", "owner", "token", "job", "fire_at_ms", "host"},
                         key)
        self.assertEqual(ps["fire_reclaim"], {"name", "owner", "token", "job", "fire_at_ms",
                                              "host", "attempt"}, key)
        self.assertEqual(ps["fire_end"], {"name", "token", "job", "fire_at_ms", "attempt",
                                          "state", "has_exit", "exit_status", "note"}, key)
        self.assertEqual(ps["fire_record"], {"name", "owner", "token", "job", "fire_at_ms",
                                             "host", "state", "note"}, key)
        self.assertEqual(ps["fire_abandon"], {"name", "owner", "token", "note"}, key)
        self.assertEqual(ps["fire_last"], {"name", "job"}, key)
        self.assertEqual(ps["fire_read"], {"name", "owner", "token", "job", "fire_at_ms"}, key)
        self.assertEqual(ps["fire_list"], {"name", "job", "since_ms", "before_ms"}, key)
        self.assertEqual(ps["fire_prune"], {"name", "since_ms", "before_ms"}, key)
        self.assertEqual(ps["fire_done"], {"name", "token", "job", "fire_at_ms", "host", "state",
                                           "has_exit", "exit_status"}, key)
        # The table: its key, and its columns as wide as sqlease.h says.
        create = sql["fire_create_table"]
        self.assertIn("PRIMARY KEY (name, job, fire_at_ms)", create, key)
        for col, snippet, width in (("name", "name_type", "SQLEASE_MAX_NAME"),
                                    ("job", "job_type", "SQLEASE_MAX_JOB"),
                                    ("owner", "owner_type", "SQLEASE_MAX_OWNER"),
                                    ("host", "host_type", "SQLEASE_MAX_HOST"),
                                    ("note", "note_type", "SQLEASE_MAX_NOTE"),
                                    ("state", "state_type", "SQLEASE_MAX_STATE")):
            self.assertIn("(%d)" % header_limit(width), row[snippet], snippet)
            self.assertIn("%s %s" % (col, as_sql(row[snippet])), create, "%s.%s" % (key, col))
        # name, job and owner compare as exact bytes, as the lease's do.
        for col in ("name", "job", "owner"):
            self.assertRegex(create, r"\b%s %s %s NOT NULL" % (
                col, re.escape(as_sql(row[col + "_type"])),
                re.escape(as_sql(row["exact_collation"]))) if row["exact_collation"] else
                r"\b%s %s NOT NULL" % (col, re.escape(as_sql(row[col + "_type"]))), key)
        for col in ("state VARCHAR(16) NOT NULL", "attempt INTEGER NOT NULL DEFAULT 1",
                    "token BIGINT NOT NULL", "started_at_ms BIGINT NOT NULL DEFAULT 0",
                    "ended_at_ms BIGINT NOT NULL DEFAULT 0", "exit_status INTEGER NULL",
                    "duration_ms BIGINT NULL", "fire_at_ms BIGINT NOT NULL"):
            self.assertIn(col, create, key)
        # Every statement that finds one fire compares name and job through
        # the row's snippets.
        for st in ("fire_reclaim", "fire_end", "fire_read", "fire_list"):
            self.assertIn(name_eq, sql[st], "%s.%s" % (key, st))
            self.assertIn(job_eq, sql[st], "%s.%s" % (key, st))
        for st in ("fire_abandon", "fire_last", "fire_prune", "fire_done"):
            self.assertIn(name_eq, sql[st], "%s.%s" % (key, st))
        # The fence: the claim and the record write only while the hold
        # (name, owner, token) is live by the database's clock, and not
        # before the fire's time; the rerun and the abandon only while it
        # is live; the claim writes 'running', attempt 1, the lease row's
        # name, owner and token.
        for st in ("fire_claim", "fire_record", "fire_reclaim", "fire_abandon", "fire_read"):
            self.assertIn(fence, sql[st], "%s.%s" % (key, st))
            self.assertRegex(sql[st], r"expires_at_ms > (c\.now_ms|%s)" % re.escape(now),
                             "%s.%s" % (key, st))
        for st in ("fire_claim", "fire_record"):
            self.assertRegex(sql[st], r"AND (c\.now_ms|%s) >= \?" % re.escape(now),
                             "%s.%s" % (key, st))
            self.assertEqual(params[st].count(P["fire_at_ms"]),
                             2 + sql[st].count("fire_at_ms = ?"), "%s.%s" % (key, st))
            self.assertRegex(sql[st], r"SELECT name, \?, \?, ", "%s.%s" % (key, st))
        self.assertIn("'running', 1, owner, ?, token, ", sql["fire_claim"], key)
        self.assertIn("state = 'abandoned' AND attempt = ?", sql["fire_reclaim"], key)
        self.assertIn("attempt = attempt + 1", sql["fire_reclaim"], key)
        for col in ("exit_status", "duration_ms", "note"):
            self.assertIn("%s = NULL" % col, sql["fire_reclaim"], key)
        self.assertIn("EXISTS (SELECT 1 FROM {table} WHERE " + fence, sql["fire_reclaim"], key)
        # The end is that claim (token, attempt), still running, and not
        # fenced by the lease; the duration from the clock, not from
        # ended_at_ms (MySQL assigns left to right); the exit status NULL
        # unless there is one.
        self.assertRegex(sql["fire_end"], r"fire_at_ms = \? AND token = \? AND attempt = \? "
                         r"AND state = 'running'$", key)
        self.assertRegex(sql["fire_end"], r"duration_ms = (c\.now_ms|%s) - started_at_ms"
                         % re.escape(now), key)
        for st in ("fire_end", "fire_done"):
            self.assertRegex(sql[st], r"exit_status = CASE WHEN \? = 1 THEN (\?|CAST\(\? AS "
                             r"INTEGER\)) ELSE NULL END" if st == "fire_end" else
                             r"CASE WHEN \? = 1 THEN (\?|CAST\(\? AS INTEGER\)) ELSE NULL END",
                             "%s.%s" % (key, st))
        self.assertNotIn("owner", sql["fire_end"], key)
        # The abandon: the running rows of older holds of its name only.
        self.assertIn("state = 'running' AND token < ?", sql["fire_abandon"], key)
        self.assertIn("state = 'abandoned'", sql["fire_abandon"], key)
        # One fire's row and the clock, always one answer (a LEFT JOIN of
        # the clock), with whether the hold is live.
        self.assertIn("LEFT JOIN {fire_table} ON " + name_eq, sql["fire_read"], key)
        self.assertIn("(SELECT COUNT(*) FROM {table} WHERE " + fence, sql["fire_read"], key)
        self.assertTrue(sql["fire_read"].startswith(
            "SELECT state, attempt, owner, host, token, started_at_ms, ended_at_ms, "
            "exit_status, duration_ms, note, "), key)
        self.assertRegex(sql["fire_last"], r"^SELECT job, MAX\(fire_at_ms\) FROM "
                         r"\{fire_table\} WHERE .* AND job > \? GROUP BY job ORDER BY job$", key)
        self.assertTrue(sql["fire_list"].endswith(
            "AND fire_at_ms >= ? AND fire_at_ms < ? ORDER BY fire_at_ms DESC, name, job"), key)
        self.assertIn("(? = '' OR (%s))" % name_eq, sql["fire_list"], key)
        self.assertIn("(? = '' OR (%s))" % job_eq, sql["fire_list"], key)
        # The prune keeps running rows and each job's latest row.
        prune = sql["fire_prune"]
        self.assertTrue(prune.startswith("DELETE "), key)
        self.assertIn("AND fire_at_ms >= ? AND fire_at_ms < ?", prune, key)
        self.assertIn("state <> 'running'", prune, key)
        self.assertIn("MAX(fire_at_ms)" if key == "mysql" else "MAX(k.fire_at_ms)", prune, key)
        self.assertEqual(prune.count("?"),
                         2 + name_eq.count("?") * (2 if key == "mysql" else 1), key)
        # run --schedule's outcome: fenced by the token and the fire the
        # take claimed, not by the expiry; started when the take was.
        done = sql["fire_done"]
        self.assertIn(name_eq + " AND token = ? AND fire_at_ms = ?", done, key)
        self.assertNotIn("expires_at_ms", done, key)
        self.assertIn("token, acquired_at_ms, ", done, key)
        self.assertIn("THEN last_owner ELSE owner END", done, key)
        # The inserts leave a fire that has a row alone: PostgreSQL's and
        # SQLite's ON CONFLICT, MySQL's INSERT IGNORE (never ON DUPLICATE
        # KEY UPDATE, which found rows counts as 1), SQL Server's NOT
        # EXISTS under key-range locks.
        for st in ("fire_claim", "fire_record", "fire_done"):
            self.assertNotIn("ON DUPLICATE KEY", sql[st], "%s.%s" % (key, st))
            guards = (sql[st].endswith("ON CONFLICT (name, job, fire_at_ms) DO NOTHING"),
                      sql[st].startswith("INSERT IGNORE INTO {fire_table}"),
                      "NOT EXISTS (SELECT 1 FROM {fire_table} WITH (UPDLOCK, HOLDLOCK) WHERE "
                      "%s AND %s AND fire_at_ms = ?)" % (name_eq, job_eq) in sql[st])
            self.assertEqual(sum(guards), 1, "%s.%s: %s" % (key, st, sql[st]))
        # Nothing of the ledger changes the lease row.
        for st in FIRE_STATEMENTS:
            self.assertNotRegex(sql[st], r"^UPDATE \{table\}", "%s.%s" % (key, st))

    def test_batched_statements(self):
        self.assertEqual(self.gen().returncode, 0)
        out = self.probe()
        each = self.batched(out)
        rows = real_rows()
        keys = real_keys()
        name, owner, ttl, token = 0, 1, 2, 3
        limits = dict(line.split(" ", 2)[1:] for line in out.splitlines()
                      if line.startswith("B "))
        # Each row's limits as the table gives them (its own or
        # [common]'s), and those of the rows that ship as they are.
        self.assertEqual(limits, {
            key: "returns=%d batch_max=%d max_params=%d"
                 % tuple(own(rows, key, f) for f in ("renew_each_returns", "batch_max",
                                                     "max_params"))
            for key in keys})
        self.assertEqual(limits["mysql"], "returns=0 batch_max=512 max_params=65535")
        self.assertEqual(limits["postgres"], "returns=1 batch_max=512 max_params=65535")
        self.assertEqual(limits["sqlite"], "returns=1 batch_max=256 max_params=999")
        self.assertEqual(limits["sqlserver"], "returns=1 batch_max=512 max_params=2100")
        for key in keys:
            with self.subTest(row=key):
                self.check_row_batched(key, own(rows, key, "renew_each_returns"), each)
        checked("test_batched_statements", keys)
        # Items are separated as written: three holds, two separators.
        # SQLite's holds are a WITH table: sqliteodbc opens a result set
        # only for a statement that starts with SELECT, WITH or the like,
        # and the renew's RETURNING rows must come back.
        sql = each[("sqlite", "renew_each")][2]
        self.assertTrue(sql.startswith(
            "WITH h (name, owner, token) AS (VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?)) UPDATE "
            "{table} SET"), sql)
        self.assertEqual(each[("sqlite", "renew_each")][1][-1], ttl)
        self.assertTrue(sql.endswith("RETURNING name, owner, token"), sql)
        self.assertIn("IN (VALUES (?, ?, CAST(? AS BIGINT)), (?, ?, CAST(? AS BIGINT)), "
                      "(?, ?, CAST(? AS BIGINT))) AND expires_at_ms > c.now_ms",
                      each[("postgres", "renew_each")][2])
        self.assertIn("WHERE name IN (?, ?, ?)", each[("sqlite", "status_each")][2])
        # PostgreSQL reads its clock once, in FROM.
        self.assertEqual(each[("postgres", "renew_each")][2].count("clock_timestamp()"), 1)
        self.assertIn("expires_at_ms > c.now_ms AND COALESCE(handoff_to, '') = '' RETURNING",
                      each[("postgres", "renew_each")][2])
        self.assertEqual(each[("postgres", "status_each")][2].count("clock_timestamp()"), 1)
        # MySQL/MariaDB: exact bytes (each value and its length), and the
        # follow-up read of the holds that a short count leaves unknown.
        self.assertEqual(each[("mysql", "renew_each")][1],
                         [ttl] + [name, name, owner, owner, token] * 3)
        self.assertNotIn("RETURNING", each[("mysql", "renew_each")][2])
        q, params, sql = each[("mysql", "renewed_each")]
        self.assertEqual(params, [name, name, owner, owner, token] * 3)
        self.assertTrue(sql.startswith("SELECT name, owner, token FROM {table}"), sql)
        self.assertIn("expires_at_ms > (TIMESTAMPDIFF", sql)
        self.assertEqual(each[("mysql", "status_each")][1], [name, name] * 3)
        # SQL Server: OUTPUT, and the lengths compared.
        sql = each[("sqlserver", "renew_each")][2]
        self.assertIn("OUTPUT inserted.name, inserted.owner, inserted.token", sql)
        self.assertIn("DATALENGTH(l.owner) = DATALENGTH(v.owner)", sql)
        # The seed: a VALUES row per name, the clock in each, and the
        # row's way of leaving an existing name alone.
        now = real_rows()["sqlite"]["now_ms"]
        self.assertIn("VALUES (?, '', 0, 0, %s, 0), (?, '', 0, 0, %s, 0), (?, '', 0, 0, %s, 0)"
                      " ON CONFLICT (name) DO NOTHING" % (now, now, now),
                      each[("sqlite", "seed_each")][2])
        self.assertTrue(each[("mysql", "seed_each")][2].endswith(
            "ON DUPLICATE KEY UPDATE name = name"))
        self.assertIn("SELECT DISTINCT v.name", each[("sqlserver", "seed_each")][2])

    def check_row_batched(self, key, returns, each):
        """What every row's batched statements must get right (built for
        3 leases by the probe)."""
        name, owner, ttl, token = 0, 1, 2, 3
        q, params, sql = each[(key, "renew_each")]
        self.assertEqual(q, len(params), key)
        # :ttl_ms once (before or after the holds), and one hold per
        # lease.
        self.assertEqual(params.count(ttl), 1, key)
        self.assertIn(params.index(ttl), (0, len(params) - 1), key)
        per = [p for p in params if p != ttl]
        self.assertEqual(len(per) % 3, 0, key)
        self.assertEqual(set(per), {name, owner, token}, key)
        self.assertEqual(per.count(token), 3, key)
        self.assertIn("{table}", sql, key)
        self.assertIn("version = ", sql, key)
        self.assertNotIn("data", sql, key)
        # Only holds with no hand-over are renewed (a request refuses the
        # renew, as the single one's), and a count-only dialect's read of
        # which holds are live calls a requested one not live: its loss.
        none = as_sql(own_or_common(real_rows(), key)["no_handoff"])
        self.assertIn(" AND " + none, re.sub(r"\bl\.", "", sql), key)
        if not returns:
            self.assertIn(" AND " + none, each[(key, "renewed_each")][2], key)
        q, params, sql = each[(key, "status_each")]
        self.assertEqual(q, len(params), key)
        self.assertEqual(set(params), {name}, key)
        self.assertEqual(len(params) % 3, 0, key)
        self.assertRegex(sql, r"^SELECT (l\.)?name, (l\.)?owner, (l\.)?token, ", key)
        self.assertIn("data, version, ttl_ms, last_owner, fire_at_ms, handoff_to, priority FROM "
                      "{table}", re.sub(r"\bl\.", "", sql), key)
        # The seed of many names: one name per item, a new row's values
        # (token from the database clock, as `seed`), an INSERT.
        q, params, sql = each[(key, "seed_each")]
        self.assertEqual(q, len(params), key)
        self.assertEqual(params, [name] * 3, key)
        self.assertRegex(sql, r"^INSERT INTO \{table\} \(name, owner, acquired_at_ms, "
                         r"expires_at_ms, token, version\)", key)
        self.assertIn(real_rows()[key]["now_ms"], sql, key)
        self.assertNotIn("0, 0, 0, 0)", sql, key)
        # The take of many rows as read: each bound to its name and the
        # token and version its read saw (take_watched's WHERE, per row);
        # one owner, ttl and data.  No expiry test, which would take an
        # expired hold past the watch, and no owner test: the version
        # says the row is as read (free, or watched out).
        data, version = 5, 6
        row = own_or_common(real_rows(), key)
        q, params, sql = each[(key, "take_each")]
        self.assertEqual(q, len(params), key)
        # The ttl twice: the expiry, and the holder's ttl written for a
        # follower's watch; the owner it writes and the one the
        # reservation's guard compares handoff_to with; its priority.
        self.assertEqual(sorted(p for p in params if p in (owner, ttl, data)),
                         [owner] * (1 + as_sql(row["handoff_owner"]).count("?"))
                         + [ttl, ttl, data], key)
        self.assertEqual(params.count(P["priority"]), 1, key)
        plain = re.sub(r"\bl\.", "", sql)
        self.assertIn("handoff_to = '', priority = ?", plain, key)
        self.assertIn("ttl_ms = ?", sql, key)
        self.assertEqual(params.count(token), 3, key)
        self.assertEqual(params.count(version), 3, key)
        # Outside the guard that refuses a reserved row (below), which asks
        # the owner and the clock only of a free row that carries a
        # hand-over.
        plain = " ".join(re.sub(r"\bl\.", "", sql).split())
        guards = [" AND (NOT (%s) OR %s OR %s OR expires_at_ms <= %s)"
                  % (as_sql(row["owner_free"]), as_sql(row["no_handoff"]),
                     as_sql(row["handoff_owner"]), clock)
                  for clock in ("c.now_ms", " ".join(real_rows()[key]["now_ms"].split()))]
        guard = [g for g in guards if g in plain]
        self.assertEqual(len(guard), 1, "%s: %s" % (key, plain))
        rest = plain.replace(guard[0], "")
        self.assertNotIn(as_sql(row["owner_free"]), rest, key)
        self.assertNotIn("expires_at_ms <=", rest, key)
        self.assertIn("token = %stoken + 1" % ("l." if key == "sqlserver" else ""), sql, key)
        self.assertEqual(("RETURNING" in sql or "OUTPUT" in sql), bool(returns), key)
        # The release of many holds: name, owner, token each, the
        # minimum hold bound once per use (release's CASEs).
        q, params, sql = each[(key, "release_each")]
        self.assertEqual(q, len(params), key)
        per = [p for p in params if p != 4]
        self.assertEqual(params.count(4), 9, key)
        self.assertRegex(sql, r"SET last_owner = (l\.)?owner, ", key)
        self.assertIn("handoff_to = '',", sql, key)
        self.assertEqual(set(per), {name, owner, token}, key)
        self.assertEqual(per.count(token), 3, key)
        self.assertEqual(("RETURNING" in sql or "OUTPUT" in sql), bool(returns), key)
        # The holder history of many holds: each item a hold (name, owner,
        # token), the head's value bound once, no end written over another.
        for st, head in (("hold_start_each", [P["host"], P["pid"]]),
                         ("hold_expire_each", [P["ended_at_ms"]]),
                         ("hold_end_each", [P["state"]])):
            q, params, sql = each[(key, st)]
            self.assertEqual(q, len(params), "%s.%s" % (key, st))
            self.assertEqual(params[:len(head)], head, "%s.%s" % (key, st))
            per = params[len(head):]
            self.assertEqual(set(per), {name, owner, token}, "%s.%s" % (key, st))
            self.assertEqual(per.count(token), 3, "%s.%s" % (key, st))
            self.assertIn("{history_table}", sql, "%s.%s" % (key, st))
            if st != "hold_expire_each":
                # (hold_end_each reads the next hold's start, as hold_end.)
                self.assertIn("{table}", sql, "%s.%s" % (key, st))
            if st == "hold_start_each":
                self.assertRegex(sql, r"SELECT (l\.)?name, (l\.)?token, (l\.)?owner, \?, \?, "
                                 r"(l\.)?acquired_at_ms, 0, ''", key)
            else:
                if st == "hold_expire_each":
                    self.assertNotIn("{table}", sql, "%s.%s" % (key, st))
                self.assertRegex(sql, r"(^| )(h\.)?ended_at_ms = 0( |$)", "%s.%s" % (key, st))
        q, params, sql = each[(key, "renewed_each")]
        if returns:
            # Never sent: the renew says which rows it renewed.
            self.assertEqual((q, params, sql), (0, [], None), key)
        else:
            # Which of the holds are live: each one's name, owner, token.
            self.assertEqual(q, len(params), key)
            self.assertEqual(set(params), {name, owner, token}, key)
            self.assertEqual(params.count(token), 3, key)
            self.assertRegex(sql, r"^SELECT name, owner, token FROM \{table\}", key)

    def test_deterministic(self):
        a = self.gen(outdir="a")
        self.assertEqual(a.returncode, 0, a.stderr)
        # Same template by an absolute path, and rows in reverse order.
        b = self.gen(path=os.path.join(self.tmp, "abs", "dialects.toml"), outdir="b")
        self.assertEqual(b.returncode, 0, b.stderr)
        rows = real_rows()
        rev = dict(reversed(list(rows.items())))
        c = self.gen(dump_toml(rev), path="rev/dialects.toml", outdir="c")
        self.assertEqual(c.returncode, 0, c.stderr)
        for name in ("dialects.c", "dialects.h"):
            with open(os.path.join(self.tmp, "a", name), "rb") as f:
                da = f.read()
            for other in ("b", "c"):
                with open(os.path.join(self.tmp, other, name), "rb") as f:
                    self.assertEqual(da, f.read(), "%s differs (%s)" % (name, other))
            self.assertNotIn(self.tmp.encode(), da)
            self.assertNotIn(ROOT.encode(), da)
        # Running again over existing outputs gives the same bytes.
        with open(os.path.join(self.tmp, "a", "dialects.c"), "rb") as f:
            first = f.read()
        self.assertEqual(self.gen(outdir="a").returncode, 0)
        with open(os.path.join(self.tmp, "a", "dialects.c"), "rb") as f:
            self.assertEqual(first, f.read())

    def test_usage(self):
        r = subprocess.run([sys.executable, GEN, "only-one-arg"],
                           capture_output=True, text=True)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("usage", r.stderr)


class Escaping(GenCase):
    def test_c_string_escapes_round_trip(self):
        rows = real_rows()
        odd = "SELECT '??=\\ \"q\" caf\u00e9 ??/ 12:30 x::y', {now} FROM {table} WHERE name = :name"
        rows["sqlite"]["status"] = odd
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)
        stmts = self.statements(self.probe())
        got = stmts[("sqlite", "status")][2]
        now = rows["sqlite"]["now_ms"]
        want = ("SELECT '??=\\ \"q\" caf\u00e9 ??/ 12:30 x::y', " + now
                + " FROM {table} WHERE name = ?")
        self.assertEqual(got, want)
        # 4 '?' inside the literal, 1 marker
        self.assertEqual(stmts[("sqlite", "status")][:2], (5, [0]))

    def test_cast_is_not_a_parameter(self):
        rows = real_rows()
        rows["postgres"]["status"] = ("SELECT owner, token::bigint, acquired_at_ms, "
                                      "expires_at_ms, {now} FROM {table} "
                                      "WHERE name = :name::varchar")
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)
        q, params, sql = self.statements(self.probe())[("postgres", "status")]
        self.assertEqual((q, params), (1, [0]))
        self.assertIn("token::bigint", sql)
        self.assertTrue(sql.endswith("name = ?::varchar"), sql)

    def test_empty_lists_and_no_failures(self):
        rows = real_rows()
        rows["sqlite"]["dbms_names"] = []
        del rows["sqlite"]["failures"]
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.probe(queries=["detect:SQLite"])
        self.assertIn("D sqlite setup=0 literal=0", out)
        self.assertNotIn("F sqlite ", out)
        self.assertIn("F [common] missing_table_sqlstates 42S02", out)
        self.assertIn("Q detect:SQLite => NULL", out)


def own(rows, key, field):
    """The value row `key` has for `field`, its own or [common]'s."""
    return rows[key].get(field, rows["common"].get(field))


def own_or_common(rows, key):
    """Every field of row `key`: its own, else [common]'s."""
    return dict(rows["common"], **rows[key])


class Inheritance(GenCase):
    # A DBMS whose SQL is the common one: its clock, its name and how it
    # is detected are all it says.
    EXAMPLE = {"now_ms": "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)",
               "aliases": ["exdb"], "dbms_names": ["ExampleDB"]}

    def test_minimal_row_inherits_everything_else(self):
        rows = real_rows()
        rows["exampledb"] = dict(self.EXAMPLE)
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)
        out = self.probe(queries=["detect:ExampleDB 4.2", "find:exampledb", "find:exdb",
                                  "detect:SQLite"])
        stmts = self.statements(out)
        now = self.nows(out)["exampledb"]
        sqlite_now = self.nows(out)["sqlite"]
        for st in STATEMENTS + FRAGMENTS:
            q, params, sql = stmts[("exampledb", st)]
            self.assertEqual(q, len(params), st)
            self.assertNotIn("{now}", sql, st)
            if st not in rows["sqlite"]:
                # SQLite inherits it too: the same text with its own clock.
                _, sp, ssql = stmts[("sqlite", st)]
                self.assertEqual(sql, ssql.replace(sqlite_now, now), st)
                self.assertEqual(params, sp, st)
        self.assertIn(now, stmts[("exampledb", "acquire")][2])
        self.assertIn("ON CONFLICT (name) DO NOTHING", stmts[("exampledb", "seed")][2])
        self.assertIn("D exampledb setup=0 literal=0", out)
        self.assertNotIn("F exampledb ", out)  # [common]'s rules only
        self.assertIn("K " + ", ".join(sorted(real_keys() + ["exampledb"])), out.splitlines())
        self.assertIn("Q detect:ExampleDB 4.2 => exampledb", out)
        self.assertIn("Q find:exampledb => exampledb", out)
        self.assertIn("Q find:exdb => exampledb", out)
        self.assertIn("Q detect:SQLite => sqlite", out)

    def test_row_field_replaces_common(self):
        rows = real_rows()
        rows["exampledb"] = dict(self.EXAMPLE, status="SELECT owner, token, acquired_at_ms, "
                                 "expires_at_ms, {now}, data FROM {table} WHERE name = :name "
                                 "AND 1 = 1")
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)
        stmts = self.statements(self.probe())
        self.assertTrue(stmts[("exampledb", "status")][2].endswith("AND 1 = 1"))
        self.assertFalse(stmts[("sqlite", "status")][2].endswith("AND 1 = 1"))

    def test_identity_is_required_not_inherited(self):
        rows = real_rows()
        rows["exampledb"] = {"now_ms": self.EXAMPLE["now_ms"]}
        self.assertRejected(dump_toml(rows), REL + ": row 'exampledb', field 'dbms_names': "
                            "missing required field")
        rows["exampledb"] = {"dbms_names": ["ExampleDB"]}
        self.assertRejected(dump_toml(rows), REL + ": row 'exampledb', field 'now_ms': "
                            "missing required field")

    def test_identity_not_allowed_in_common(self):
        for field, value in (("now_ms", "1"), ("aliases", ["x"]), ("dbms_names", ["x"])):
            rows = real_rows()
            rows["common"][field] = value
            self.assertRejected(dump_toml(rows), REL + ": row 'common', field '%s': not allowed "
                                "in [common]" % field)

    def test_unknown_field_in_common(self):
        rows = real_rows()
        rows["common"]["relase"] = "SELECT 1"
        self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'relase': unknown field")

    def test_common_error_said_once_as_commons(self):
        # Two rows inherit `list`: the mistake is [common]'s, said once.
        rows = real_rows()
        rows["common"]["list"] = rows["common"]["list"].replace(":name", ":nam")
        err = self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'list': "
                                  "unknown parameter ':nam'")
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_common_placeholder_and_parameter_checked(self):
        rows = real_rows()
        rows["common"]["status"] = rows["common"]["status"].replace("{table}", "{tabel}")
        self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'status': "
                            "unknown placeholder '{tabel}'")
        rows = real_rows()
        rows["common"]["renew"] = rows["common"]["renew"].replace(" AND token = :token", "")
        self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'renew': "
                            "missing parameter :token")

    def test_missing_after_inheritance(self):
        # Without a default, each row that does not give the field says so.
        rows = real_rows()
        del rows["common"]["create_table"]
        err = self.assertRejected(
            dump_toml(rows),
            REL + ": row 'mysql', field 'create_table': missing required field",
            REL + ": row 'postgres', field 'create_table': missing required field",
            REL + ": row 'sqlite', field 'create_table': missing required field")
        self.assertNotIn("row 'sqlserver'", err)

    def test_inherited_field_checked_with_the_rows_clock(self):
        # [common]'s fence is fine on its own; this row's clock pasted in
        # makes it end the caller's statement.
        rows = real_rows()
        rows["exampledb"] = dict(self.EXAMPLE, now_ms="1; DELETE FROM x")
        self.assertRejected(dump_toml(rows), REL + ": row 'exampledb', field 'fence' (inherited "
                            "from [common]): ';' in a predicate")

    def test_alias_common_refused(self):
        rows = real_rows()
        rows["sqlite"]["aliases"] = ["common"]
        self.assertRejected(dump_toml(rows), REL + ": row 'sqlite', field 'aliases': item 1: "
                            "'common' names the row of defaults")

    def test_only_common(self):
        rows = real_rows()
        self.assertRejected(dump_toml({"common": rows["common"]}), REL + ": no dialect rows")


class Snippets(GenCase):
    # A DBMS whose `=` pads trailing spaces and whose SELECT needs a table
    # (as Db2's does): its snippets are all it says beyond its identity,
    # and every statement it inherits compares names and owners its way.
    # docs/adding-a-dialect.md shows this row (block
    # adding-a-dialect-padding).
    KEY, PADDING = doc_row("adding-a-dialect-padding")

    def test_padding_row_inherits_statements(self):
        self.assertEqual(self.KEY, "paddb")
        rows = real_rows()
        rows["paddb"] = dict(self.PADDING)
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)
        stmts = self.statements(self.probe())
        name, owner, token = 0, 1, 3
        self.assertEqual(stmts[("paddb", "now")][2],
                         "SELECT %s FROM SYSIBM.SYSDUMMY1" % self.PADDING["now_ms"])
        for st in ("acquire", "renew", "release", "release_force", "status", "fence"):
            self.assertIn("name = ? AND LENGTH(name) = LENGTH(?)", stmts[("paddb", st)][2], st)
            self.assertEqual(stmts[("paddb", st)][1].count(name), 2, st)
        for st in ("renew", "release", "fence"):
            self.assertIn("owner = ? AND LENGTH(owner) = LENGTH(?)", stmts[("paddb", st)][2], st)
            self.assertEqual(stmts[("paddb", st)][1].count(owner), 2, st)
        self.assertIn("WHERE name = ? AND LENGTH(name) = LENGTH(?) AND token = ? AND "
                      "(LENGTH(owner) = 0 OR owner IS NULL", stmts[("paddb", "acquire")][2])
        self.assertEqual(stmts[("paddb", "fence")][1], [name, name, owner, owner, token])
        # The batched statements too: each value next to its length.
        each = self.batched(self.probe())
        for st in ("renew_each", "renewed_each"):
            self.assertIn("(name, LENGTH(name), owner, LENGTH(owner), token) IN ((?, LENGTH(?), "
                          "?, LENGTH(?), ?), ", each[("paddb", st)][2], st)
            self.assertEqual([p for p in each[("paddb", st)][1] if p != 2],
                             [name, name, owner, owner, token] * 3, st)
        self.assertIn("WHERE (name, LENGTH(name)) IN ((?, LENGTH(?)), ",
                      each[("paddb", "status_each")][2])
        self.assertIn("(name, LENGTH(name), owner, LENGTH(owner), token) IN ((?, LENGTH(?), "
                      "?, LENGTH(?), ?), ", each[("paddb", "release_each")][2])
        self.assertIn("WHERE (name, LENGTH(name), token, version) IN ((?, LENGTH(?), ?, ?), ",
                      each[("paddb", "take_each")][2])
        self.assertIn("name VARCHAR(64) FOR BIT DATA NOT NULL PRIMARY KEY, owner VARCHAR(255) "
                      "FOR BIT DATA NOT NULL DEFAULT ''", stmts[("paddb", "create_table")][2])
        # An empty snippet leaves no stray blank: [common]'s own rows.
        self.assertIn("data VARCHAR(1024) NULL, ttl_ms", stmts[("paddb", "create_table")][2])
        self.assertIn("last_owner VARCHAR(255) NOT NULL DEFAULT '', fire_at_ms",
                      stmts[("paddb", "create_table")][2])
        # The fire ledger compares jobs its way too.
        for st in ("fire_claim", "fire_end", "fire_read"):
            self.assertIn("name = ? AND LENGTH(name) = LENGTH(?)", stmts[("paddb", st)][2], st)
        for st in ("fire_end", "fire_read", "fire_list", "fire_reclaim"):
            self.assertIn("job = ? AND LENGTH(job) = LENGTH(?)", stmts[("paddb", st)][2], st)
        self.assertIn("job VARCHAR(64) FOR BIT DATA NOT NULL",
                      stmts[("paddb", "fire_create_table")][2])
        self.assertEqual(stmts[("sqlite", "now")][2], "SELECT " + rows["sqlite"]["now_ms"])
        # The other rows keep theirs.
        self.assertIn("WHERE name = ? AND token = ?", stmts[("sqlite", "acquire")][2])
        self.assertNotIn("LENGTH", stmts[("sqlite", "fence")][2])

    def test_snippet_in_a_rows_own_statement(self):
        rows = real_rows()
        rows["paddb"] = dict(self.PADDING, status="SELECT owner, token, acquired_at_ms, "
                             "expires_at_ms, {now}, data FROM {table} WHERE {name_equals} "
                             "AND 1 = 1")
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)
        q, params, sql = self.statements(self.probe())[("paddb", "status")]
        self.assertTrue(sql.endswith("WHERE name = ? AND LENGTH(name) = LENGTH(?) AND 1 = 1"), sql)
        self.assertEqual(params, [0, 0])

    def test_snippet_checked(self):
        cases = (
            ("name_equals", "name = :owner",
             "field 'name_equals': unexpected parameter :owner (this snippet takes :name)"),
            ("name_equals", "1 = 1", "field 'name_equals': missing parameter :name"),
            ("owner_free", "owner = {now}",
             "field 'owner_free': a snippet holds no placeholder or brace"),
            ("owner_equals", "  ", "field 'owner_equals': empty snippet"),
            ("owner_free", "owner = '", "field 'owner_free': unterminated quoted text"),
            ("from_dual", 5, "field 'from_dual': expected a string, got an integer"),
        )
        for field, value, message in cases:
            with self.subTest(field=field, value=value):
                rows = real_rows()
                rows["paddb"] = dict(self.PADDING)
                rows["paddb"][field] = value
                # Said once, as the row's: not again for each statement
                # that pastes it in.
                err = self.assertRejected(dump_toml(rows), REL + ": row 'paddb', " + message)
                self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_padding_row_needs_row_value_snippets(self):
        # A row whose `=` pads and that leaves out the row-value snippets
        # would inherit batched statements that compare with a bare IN.
        rows = real_rows()
        rows["paddb"] = {k: v for k, v in self.PADDING.items() if k not in ("hold_key",
                                                                             "name_value")}
        err = self.assertRejected(
            dump_toml(rows),
            REL + ": row 'paddb', field 'renew_each' (inherited from [common]): the row sets "
            "name_equals and owner_equals but not hold_key, so its row values would not "
            "compare as exact bytes",
            REL + ": row 'paddb', field 'renewed_each' (inherited from [common])",
            REL + ": row 'paddb', field 'status_each' (inherited from [common]): the row sets "
            "name_equals and owner_equals but not name_value",
            REL + ": row 'paddb', field 'release_each' (inherited from [common]): the row sets "
            "name_equals and owner_equals but not hold_key",
            REL + ": row 'paddb', field 'hold_start_each' (inherited from [common]): the row "
            "sets name_equals and owner_equals but not hold_key",
            REL + ": row 'paddb', field 'hold_expire_each' (inherited from [common])",
            REL + ": row 'paddb', field 'hold_end_each' (inherited from [common])")
        self.assertEqual(len(err.strip().splitlines()), 7, err)
        # Its own batched statements need none of them.
        rows["paddb"]["status_each"] = own(rows, "sqlite", "status_each").replace(
            "{name_key}", "name").replace("{name_value}", ":name")
        rows["paddb"]["renew_each_returns"] = True
        # Rows that return rows: all three statements that answer so are
        # its own, or the generator refuses the inherited ones.
        err = self.assertRejected(
            dump_toml(rows),
            REL + ": row 'paddb', field 'renew_each' (inherited from [common]): "
            "renew_each_returns is true here and false in [common]: the row must write its own",
            REL + ": row 'paddb', field 'take_each' (inherited from [common])",
            REL + ": row 'paddb', field 'release_each' (inherited from [common])")
        for st in ("renew_each", "take_each", "release_each"):
            rows["paddb"][st] = rows["sqlite"][st]
        # The holder history's batched statements too (SQLite's are its
        # own, with no row-value snippet).
        for st in ("hold_start_each", "hold_expire_each", "hold_end_each"):
            rows["paddb"][st] = rows["sqlite"][st]
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_empty_snippet_allowed(self):
        rows = real_rows()
        rows["paddb"] = dict(self.PADDING, from_dual="", exact_collation="")
        self.assertEqual(self.gen(dump_toml(rows)).returncode, 0)

    def test_common_snippet_error_said_once(self):
        rows = real_rows()
        rows["common"]["name_equals"] = "name = :nam"
        err = self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'name_equals': "
                                  "unknown parameter ':nam'")
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_unknown_and_unset_snippet(self):
        rows = real_rows()
        rows["common"]["status"] = rows["common"]["status"].replace("{name_equals}",
                                                                    "{name_equal}")
        self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'status': unknown "
                            "placeholder '{name_equal}' (known: {now}, {table}, {fire_table}, "
                            "{history_table}, {name_equals}")
        rows = real_rows()
        del rows["common"]["from_dual"]
        self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'now': snippet "
                            "'{from_dual}' is set neither in the row nor in [common]")
        # Set nowhere and used nowhere: nothing to say.
        rows = real_rows()
        del rows["common"]["from_dual"]
        rows["common"]["now"] = "SELECT {now}"
        rows["common"]["fire_read"] = rows["common"]["fire_read"].replace(" {from_dual}", "")
        self.assertEqual(self.gen(dump_toml(rows)).returncode, 0)

    def test_common_compares_through_snippets(self):
        # A new statement of [common] that compares with a bare `=` would
        # hand MySQL/MariaDB and SQL Server an inexact comparison.
        for field, old, new, spelled in (
                ("status", "{name_equals}", "name = :name", "name = :name"),
                ("renew", "{owner_equals}", "owner = :owner", "owner = :owner"),
                ("acquire", "{owner_free}", "owner = ''", "owner = ''"),
                ("fence", "{name_equals}", "name=:name", "name = :name"),
                ("renew", "{no_handoff}", "handoff_to = ''", "handoff_to = ''"),
                ("acquire", "{handoff_owner}", "handoff_to = :owner", "handoff_to = :owner"),
                ("handoff_cancel", "{handoff_target}", "handoff_to = :target",
                 "handoff_to = :target")):
            with self.subTest(field=field):
                rows = real_rows()
                rows["common"][field] = rows["common"][field].replace(old, new)
                self.assertRejected(dump_toml(rows), REL + ": row 'common', field '%s': "
                                    "compares with '%s': write {" % (field, spelled))
        # Assignments are not comparisons, a qualified or another column
        # is not the row's, and a row's own statement is its own affair.
        rows = real_rows()
        self.assertIn("owner = :owner,", rows["common"]["acquire"])
        rows["common"]["status"] += " AND l.name = :name AND rename = :name"
        rows["sqlite"]["release_force"] = ("UPDATE {table} SET owner = '', expires_at_ms = 0, "
                                           "data = NULL, version = version + 1 "
                                           "WHERE name = :name")
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)


class Malformed(GenCase):
    def rows(self):
        return real_rows()

    def test_syntax_error(self):
        text = template_text() + "\n[broken\n"
        err = self.assertRejected(text, REL + ":", "TOML syntax error")
        self.assertEqual(len(err.strip().splitlines()), 1)

    def test_syntax_error_names_row_and_field(self):
        text = '[sqlite]\nnow_ms = "x"\nacquire = oops\n'
        self.assertRejected(text, REL + ": row 'sqlite', field 'acquire': TOML syntax error")

    def test_duplicate_row(self):
        text = template_text() + "\n[sqlite]\nnow = \"SELECT 1\"\n"
        self.assertRejected(text, REL + ": row 'sqlite'", "duplicate row", "twice")

    def test_duplicate_field(self):
        rows = self.rows()
        text = dump_toml(rows).replace('[sqlite]\n', '[sqlite]\nseed = "SELECT 1"\n', 1)
        self.assertRejected(text, REL + ": row 'sqlite', field 'seed': duplicate field")

    def test_missing_field(self):
        rows = self.rows()
        del rows["sqlite"]["seed"]
        del rows["common"]["seed"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'seed': missing required field")

    def test_unknown_field(self):
        rows = self.rows()
        rows["mysql"]["aquire"] = "SELECT 1"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'mysql', field 'aquire': unknown field")

    def test_alias_naming_another_row(self):
        rows = self.rows()
        rows["sqlite"]["aliases"] = ["mysql"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'aliases': "
                            "'mysql' already names row 'mysql'")

    def test_alias_not_an_identifier(self):
        rows = self.rows()
        rows["sqlite"]["aliases"] = ["SQL Lite"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'aliases': "
                            "item 1: 'SQL Lite' must match [a-z][a-z0-9_]*")

    def test_string_where_list_expected(self):
        rows = self.rows()
        rows["sqlite"]["dbms_names"] = "SQLite"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'dbms_names': "
                            "expected a list of strings, got a string")

    def test_list_where_string_expected(self):
        rows = self.rows()
        rows["sqlite"]["acquire"] = ["UPDATE {table} SET owner = :owner"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'acquire': "
                            "expected a string, got a list")

    def test_list_item_of_wrong_type(self):
        rows = self.rows()
        rows["postgres"]["session_setup"] = ["SET x = 1", 5]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'postgres', field 'session_setup': "
                            "expected a list of strings, item 2 is an integer")

    def test_integer_where_string_expected(self):
        rows = self.rows()
        rows["sqlite"]["now_ms"] = 5
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'now_ms': "
                            "expected a string, got an integer")

    def test_empty_statement(self):
        rows = self.rows()
        rows["sqlite"]["acquire"] = "  \n  "
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'acquire': empty statement")

    def test_unknown_placeholder(self):
        rows = self.rows()
        rows["sqlite"]["acquire"] = own(rows, "sqlite", "acquire").replace("{table}", "{tabel}")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'acquire': "
                            "unknown placeholder '{tabel}'")

    def test_unclosed_placeholder(self):
        rows = self.rows()
        rows["sqlite"]["release"] = "UPDATE {table SET owner = '' WHERE name = :name AND owner = :owner"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'release': unclosed '{'")

    def test_unknown_parameter(self):
        rows = self.rows()
        rows["sqlite"]["acquire"] = own(rows, "sqlite", "acquire").replace(":ttl_ms", ":ttl")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'acquire': "
                            "unknown parameter ':ttl'")

    def test_bare_question_mark(self):
        rows = self.rows()
        rows["sqlite"]["release_force"] = "UPDATE {table} SET owner = '' WHERE name = ?"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'release_force': bare '?' marker")

    def test_bad_row_key(self):
        rows = self.rows()
        rows["Sql-Lite"] = rows.pop("sqlite")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'Sql-Lite': row key must match [a-z][a-z0-9_]*")

    def test_row_key_starting_with_digit(self):
        rows = self.rows()
        rows["9sqlite"] = rows.pop("sqlite")
        self.assertRejected(dump_toml(rows), REL + ": row '9sqlite': row key must match")

    def test_unexpected_parameter_in_now(self):
        rows = self.rows()
        rows["sqlite"]["now"] = "SELECT {now} + :ttl_ms"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'now': unexpected parameter :ttl_ms")

    def test_unexpected_parameter_in_status(self):
        rows = self.rows()
        rows["mysql"]["status"] = own(rows, "mysql", "status") + " AND owner = :owner"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'mysql', field 'status': unexpected parameter :owner")

    def test_take_without_token(self):
        # A take is bound to the token the follower's read saw, so that one
        # affected row says which token it made.
        rows = self.rows()
        rows["sqlite"]["acquire"] = own(rows, "sqlite", "acquire").replace(" AND token = :token",
                                                                        "")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'acquire': missing parameter :token")

    def test_missing_fence(self):
        rows = self.rows()
        del rows["postgres"]["fence"]
        del rows["common"]["fence"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'postgres', field 'fence': missing required field")

    def test_fence_unknown_parameter(self):
        rows = self.rows()
        rows["sqlite"]["fence"] = own(rows, "sqlite", "fence").replace(":token", ":tokn")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'fence': unknown parameter ':tokn'")

    def test_fence_unexpected_parameter(self):
        rows = self.rows()
        rows["sqlite"]["fence"] = own(rows, "sqlite", "fence").replace(
            "AND token = :token", "AND token = :token AND :ttl_ms > 0")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'fence': unexpected parameter :ttl_ms")

    def test_fence_missing_parameter(self):
        rows = self.rows()
        rows["mysql"]["fence"] = own(rows, "mysql", "fence").replace(
            "AND token = :token", "")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'mysql', field 'fence': missing parameter :token")

    def test_fence_unknown_placeholder(self):
        rows = self.rows()
        rows["sqlite"]["fence"] = own(rows, "sqlite", "fence").replace("{now}", "{today}")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'fence': unknown placeholder '{today}'")

    def test_fence_without_table(self):
        rows = self.rows()
        rows["sqlite"]["fence"] = own(rows, "sqlite", "fence").replace("{table}", "sys_job_lease")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'fence': statement does not use {table}")

    def test_fence_semicolon(self):
        rows = self.rows()
        rows["sqlite"]["fence"] = own(rows, "sqlite", "fence") + "; DELETE FROM {table}"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'fence': ';' in a predicate")

    def test_fence_semicolon_in_literal_is_text(self):
        rows = self.rows()
        rows["sqlite"]["fence"] = own(rows, "sqlite", "fence").replace(
            "AND token = :token", "AND token = :token AND ';)' <> ''")
        r = self.gen(dump_toml(rows))
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_fence_unbalanced(self):
        rows = self.rows()
        rows["sqlite"]["fence"] = own(rows, "sqlite", "fence").rstrip(")")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'fence': 1 '(' not closed")
        rows = self.rows()
        rows["sqlite"]["fence"] = own(rows, "sqlite", "fence") + ") OR (1 = 1"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'fence': ')' at offset")

    def test_fence_is_not_a_statement(self):
        rows = self.rows()
        rows["sqlite"]["fence"] = ("SELECT 1 FROM {table} WHERE name = :name AND owner = :owner "
                                   "AND token = :token")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'fence': a predicate, not a statement")

    def test_fence_too_many_markers(self):
        rows = self.rows()
        rows["sqlite"]["fence"] = own(rows, "sqlite", "fence").replace(
            "AND token = :token", "AND token = :token" + " AND name = :name" * 14)
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'fence': 17 markers; at most 16")

    def test_bad_string_literal(self):
        rows = self.rows()
        rows["sqlite"]["string_literal"] = "oracle"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'string_literal': 'oracle' is not a "
                            "known style")
        rows["sqlite"]["string_literal"] = 1
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'string_literal': expected a string")

    def test_driver_keys(self):
        rows = self.rows()
        drv = rows["sqlite"]["drivers"][0]
        drv["creates"] = {"NoCreat": "1"}
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'drivers': item 1: unknown key "
                            "'creates' (known: match, settings, must_exist, database_file)")
        rows = self.rows()
        rows["sqlite"]["drivers"][0]["must_exist"] = {"No-Creat": "1"}
        self.assertRejected(dump_toml(rows), "setting 'No-Creat' is not a connection-string key")
        rows = self.rows()
        rows["sqlite"]["drivers"][0]["must_exist"] = {"NoCreat": "{nope}"}
        self.assertRejected(dump_toml(rows), "field 'drivers': item 1: setting 'NoCreat'")
        rows = self.rows()
        rows["sqlite"]["drivers"][0]["database_file"] = "Data-base"
        self.assertRejected(dump_toml(rows), "'database_file' must name a connection-string key")
        # Both keys are optional: a driver without them generates.
        rows = self.rows()
        del rows["sqlite"]["drivers"][0]["must_exist"]
        del rows["sqlite"]["drivers"][0]["database_file"]
        self.assertEqual(self.gen(dump_toml(rows)).returncode, 0)

    def test_missing_parameter(self):
        rows = self.rows()
        rows["sqlite"]["release"] = "UPDATE {table} SET owner = '' WHERE name = :name"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'release': missing parameters :owner, "
                            ":token")

    def test_statement_without_table(self):
        rows = self.rows()
        rows["sqlite"]["status"] = "SELECT owner FROM sys_job_lease WHERE name = :name"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status': statement does not use {table}")

    def test_bad_sqlstate(self):
        rows = self.rows()
        rows["sqlite"]["failures"]["missing_table_sqlstates"] = ["42S0"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'failures.missing_table_sqlstates': "
                            "item 1: '42S0' is not a SQLSTATE")
        rows = self.rows()
        rows["common"]["failures"]["connection_lost_sqlstates"] = ["8"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'common', field 'failures.connection_lost_sqlstates': "
                            "item 1: '8' is not a SQLSTATE")

    def test_bad_failures(self):
        rows = self.rows()
        rows["postgres"]["failures"]["timeout_states"] = ["57014"]
        self.assertRejected(dump_toml(rows), REL + ": row 'postgres', field "
                            "'failures.timeout_states': unknown field (known: timeout_sqlstates")
        rows = self.rows()
        rows["mysql"]["failures"]["connection_lost_messages"] = ["server has gone away", " "]
        self.assertRejected(dump_toml(rows), REL + ": row 'mysql', field "
                            "'failures.connection_lost_messages': item 2 is empty")
        rows = self.rows()
        rows["mysql"]["failures"]["locked_messages"] = "database is locked"
        self.assertRejected(dump_toml(rows), REL + ": row 'mysql', field "
                            "'failures.locked_messages': expected a list of strings, got a string")
        rows = self.rows()
        rows["mysql"]["failures"] = ["x"]
        self.assertRejected(dump_toml(rows), REL + ": row 'mysql', field 'failures': "
                            "expected a table of lists, got a list")

    def test_failures_syntax_error_names_row(self):
        text = template_text().replace('[sqlite.failures]\n', '[sqlite.failures]\nlocked_messages = \n', 1)
        self.assertRejected(text, REL + ": row 'sqlite', field 'failures.locked_messages': "
                            "TOML syntax error")

    def test_empty_dbms_name(self):
        rows = self.rows()
        rows["sqlite"]["dbms_names"] = ["SQLite", ""]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'dbms_names': item 2 is empty")

    def test_parameter_in_session_setup(self):
        rows = self.rows()
        rows["sqlserver"]["session_setup"] = ["SET x = :owner"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlserver', field 'session_setup': item 1: "
                            "parameter ':owner' is not allowed here")

    def test_unterminated_literal(self):
        rows = self.rows()
        rows["sqlite"]["release_force"] = "UPDATE {table} SET owner = ' WHERE name = :name"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'release_force': unterminated")

    def test_every_error_reported(self):
        rows = self.rows()
        del rows["sqlite"]["dbms_names"]
        rows["mysql"]["acquire"] = ""
        err = self.assertRejected(dump_toml(rows),
                                  REL + ": row 'sqlite', field 'dbms_names': missing required "
                                  "field",
                                  REL + ": row 'mysql', field 'acquire': empty statement")
        self.assertEqual(len(err.strip().splitlines()), 2, err)

    def test_each_missing_construct(self):
        rows = self.rows()
        rows["sqlite"]["status_each"] = ("SELECT name, owner, token, acquired_at_ms, "
                                         "expires_at_ms, {now}, data FROM {table} "
                                         "WHERE name = :name")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status_each': a batched statement "
                            "needs one '{each: ...}'")

    def test_each_twice(self):
        rows = self.rows()
        rows["postgres"]["status_each"] = own(rows, "postgres", "status_each").replace(
            "IN ({each: :name})", "IN ({each: :name}) OR name IN ({each: :name})")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'postgres', field 'status_each': 2 '{each: ...}'")

    def test_each_outside_batched_statement(self):
        rows = self.rows()
        rows["sqlite"]["status"] = ("SELECT owner, token, acquired_at_ms, expires_at_ms, {now}, "
                                    "data FROM {table} WHERE name IN ({each: :name})")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status': '{each: ...}' is only "
                            "allowed in a batched statement")

    def test_each_item_parameters(self):
        rows = self.rows()
        rows["common"]["renew_each"] = rows["common"]["renew_each"].replace(
            "{each: {hold_value}}", "{each: (:name, :owner, :tokn)}")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'common', field 'renew_each': '{each: ...}': "
                            "unknown parameter ':tokn'")
        rows = self.rows()
        rows["mysql"]["renewed_each"] = rows["common"]["renewed_each"].replace(
            "{each: {hold_value}}", "{each: (:name, :owner)}")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'mysql', field 'renewed_each': '{each: ...}': "
                            "missing parameter :token")
        rows = self.rows()
        rows["sqlite"]["status_each"] = own(rows, "sqlite", "status_each").replace(
            "{each: {name_value}}", "{each: :name, :ttl_ms}")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status_each': '{each: ...}': "
                            "unexpected parameter :ttl_ms")

    def test_each_head_parameters(self):
        # The ttl is bound once, outside the items; a renew without it
        # could not write an expiry.
        rows = self.rows()
        rows["sqlite"]["renew_each"] = own(rows, "sqlite", "renew_each").replace(
            "{now} + :ttl_ms", "{now} + 1000")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'renew_each': missing parameter "
                            ":ttl_ms")
        rows = self.rows()
        rows["sqlite"]["status_each"] = own(rows, "sqlite", "status_each").replace(
            "WHERE ", "WHERE owner <> :owner AND ")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status_each': unexpected parameter "
                            ":owner")

    def test_each_item_placeholders(self):
        # {now} and the snippets are pasted into an item; {table} and a
        # second {each: ...} are not allowed there.
        rows = self.rows()
        rows["sqlite"]["status_each"] = own(rows, "sqlite", "status_each").replace(
            "{each: {name_value}}", "{each: :name, {table}}")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status_each': '{each: ...}': "
                            "placeholder '{table}' is not allowed here")
        rows = self.rows()
        rows["sqlite"]["status_each"] = own(rows, "sqlite", "status_each").replace(
            "{each: {name_value}}", "{each: :name, {each: :name}}")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status_each': '{each: ...}': "
                            "'{each: ...}' is only allowed")
        rows = self.rows()
        rows["sqlite"]["status_each"] = own(rows, "sqlite", "status_each").replace(
            "{each: {name_value}}", "{each: :name, {bogus}}")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status_each': '{each: ...}': "
                            "unknown placeholder '{bogus}'")
        rows = self.rows()
        rows["sqlite"]["status_each"] = own(rows, "sqlite", "status_each").replace(
            "{each: {name_value}}", "{each: }")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status_each': '{each: ...}' is empty")

    def test_each_without_table(self):
        rows = self.rows()
        rows["sqlite"]["status_each"] = own(rows, "sqlite", "status_each").replace(
            "{table}", "sys_job_lease")
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'status_each': statement does not "
                            "use {table}")

    def test_batch_max_within_max_params(self):
        # 1 + 400 * 3 parameters do not fit SQLite's 999.
        rows = self.rows()
        rows["sqlite"]["batch_max"] = 400
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'batch_max': 400 leases make "
                            "renew_each bind 1201 parameters; max_params is 999")
        # Within max_params, but beyond what the binder takes whatever
        # max_params says (src/odbc.c).
        rows = self.rows()
        rows["postgres"]["batch_max"] = 20000
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'postgres', field 'batch_max': 20000 leases make "
                            "renew_each bind 60001 parameters; src/odbc.c binds at most 32767")
        rows["postgres"]["batch_max"] = 10919  # release_each: 9 + 10919 * 3
        self.assertEqual(self.gen(dump_toml(rows), outdir="fits").returncode, 0)
        # MariaDB binds 5 per hold: 2100 would not take 512 of them.
        rows = self.rows()
        rows["mysql"]["max_params"] = 2100
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'mysql', field 'batch_max': 512 leases make "
                            "renew_each bind 2561 parameters; max_params is 2100")

    def test_limit_and_flag_types(self):
        rows = self.rows()
        rows["sqlite"]["batch_max"] = "256"
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'batch_max': expected an integer, "
                            "got a string")
        rows = self.rows()
        rows["postgres"]["max_params"] = 0
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'postgres', field 'max_params': 0: must be at least 1")
        rows = self.rows()
        rows["sqlite"]["renew_each_returns"] = 1
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'renew_each_returns': expected a "
                            "boolean, got an integer")
        rows = self.rows()
        rows["sqlite"]["batch_max"] = True
        self.assertRejected(dump_toml(rows), "field 'batch_max': expected an integer, got a "
                            "boolean")

    def test_renewed_each_only_without_returning(self):
        # A dialect that can only count must say how to find the renewed
        # rows; one whose renew returns them must not carry a statement
        # that is never sent.
        rows = self.rows()
        del rows["common"]["renewed_each"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'mysql', field 'renewed_each': missing required field")
        rows = self.rows()
        rows["sqlite"]["renewed_each"] = rows["common"]["renewed_each"]
        self.assertRejected(dump_toml(rows),
                            REL + ": row 'sqlite', field 'renewed_each': not used: "
                            "renew_each_returns is true")
        # A dialect that turns the flag off and gives the read generates.
        rows = self.rows()
        rows["sqlite"]["renew_each_returns"] = False
        rows["sqlite"]["renewed_each"] = (
            "SELECT name, owner, token FROM {table} WHERE (name, owner, token) IN "
            "(VALUES {each: (:name, :owner, :token)}) AND expires_at_ms > {now}")
        self.assertEqual(self.gen(dump_toml(rows)).returncode, 0)
        each = self.batched(self.probe())
        self.assertEqual(each[("sqlite", "renewed_each")][1], [0, 1, 3] * 3)

    def test_no_rows(self):
        self.assertRejected("# nothing\n", REL + ": no dialect rows")

    def test_fire_table_placeholder(self):
        # A lease statement never names the fire table (the library would
        # send the braces), and a statement of the ledger names it.
        rows = self.rows()
        rows["sqlite"]["status"] = own(rows, "sqlite", "status").replace(
            "WHERE", "WHERE EXISTS (SELECT 1 FROM {fire_table}) AND")
        self.assertRejected(dump_toml(rows), REL + ": row 'sqlite', field 'status': "
                            "placeholder '{fire_table}' is not allowed here")
        rows = self.rows()
        rows["sqlite"]["fire_last"] = own(rows, "sqlite", "fire_last").replace(
            "{fire_table}", "sys_job_fire")
        self.assertRejected(dump_toml(rows), REL + ": row 'sqlite', field 'fire_last': "
                            "statement does not use {fire_table}")
        # The end is not fenced by the lease: it names only the fire table.
        rows = self.rows()
        rows["sqlite"]["fire_end"] = own(rows, "sqlite", "fire_end") + \
            " AND EXISTS (SELECT 1 FROM {table})"
        self.assertRejected(dump_toml(rows), REL + ": row 'sqlite', field 'fire_end': "
                            "placeholder '{table}' is not allowed here")
        # The claim is: without the lease table it would be no fence.
        rows = self.rows()
        rows["common"]["fire_claim"] = ("INSERT INTO {fire_table} (name, job, fire_at_ms, state,"
                                        " owner, host, token) VALUES (:name, :job, :fire_at_ms, "
                                        "'running', :owner, :host, :token)")
        self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'fire_claim': "
                            "statement does not use {table}")

    def test_fire_claim_fenced(self):
        # The claim binds the hold it is fenced by: without the owner (or
        # the token) it would write under any hold.
        rows = self.rows()
        rows["common"]["fire_claim"] = rows["common"]["fire_claim"].replace(
            "{owner_equals} AND ", "")
        self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'fire_claim': "
                            "missing parameter :owner")
        rows = self.rows()
        rows["common"]["fire_record"] = rows["common"]["fire_record"].replace(
            "AND token = :token", "")
        self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'fire_record': "
                            "missing parameter :token")

    def test_statement_markers_bound(self):
        # src/db.c binds a statement from 16 values at most.
        rows = self.rows()
        rows["mysql"]["fire_reclaim"] = own(rows, "mysql", "fire_reclaim") + \
            " AND fire_at_ms = :fire_at_ms AND fire_at_ms = :fire_at_ms AND token = :token"
        self.assertRejected(dump_toml(rows), REL + ": row 'mysql', field 'fire_reclaim': "
                            "17 markers; src/db.c binds at most 16 in a statement")

    def test_job_compared_through_snippet(self):
        rows = self.rows()
        rows["common"]["fire_end"] = rows["common"]["fire_end"].replace("{job_equals}",
                                                                        "job = :job")
        self.assertRejected(dump_toml(rows), REL + ": row 'common', field 'fire_end': compares "
                            "with 'job = :job': write {job_equals} instead")
        # A row whose `=` pads spells the job's comparison too.
        rows = self.rows()
        del rows["mysql"]["job_equals"]
        self.assertRejected(dump_toml(rows), REL + ": row 'mysql', field 'job_equals': the row "
                            "sets name_equals and owner_equals but not job_equals")


def copy_row(text, key, new_key, alias, dbms_name, driver_match):
    """The table `text` with row `key` (and its sub-tables) copied to the
    end under `new_key`, with its own alias, DBMS name and driver match
    and nothing else changed: how a contributor starts a new dialect."""
    m = re.search(r"^\[%s\]\n.*?(?=^\[(?!%s\.)|\Z)" % (key, key), text, re.M | re.S)
    block = m.group(0)
    block = re.sub(r"^\[%s(\.[a-z_]+)?\]" % key, lambda h: "[%s%s]" % (new_key, h.group(1) or ""),
                   block, flags=re.M)
    block, n1 = re.subn(r"^aliases = .*$", "aliases = [%s]" % json.dumps(alias), block,
                        count=1, flags=re.M)
    block, n2 = re.subn(r"^dbms_names = .*$", "dbms_names = [%s]" % json.dumps(dbms_name),
                        block, count=1, flags=re.M)
    block, n3 = re.subn(r"match = \[[^\]]*\]", "match = [%s]" % json.dumps(driver_match), block,
                        count=1)
    assert (n1, n2, n3) == (1, 1, 1), (n1, n2, n3)
    return text.rstrip("\n") + "\n\n" + block


@unittest.skipIf(os.environ.get("SQLEASE_GEN_TEMPLATE"), "run on a table of its own")
class NewDialect(GenCase):
    """docs/adding-a-dialect.md's first two steps, as a contributor takes
    them: the [postgres] row copied under a new key with its own alias,
    DBMS name and driver match (those of the document's block
    adding-a-dialect-copy), nothing else touched.  The table generates,
    the row is found, detected and matched, this file's tests pass on that
    table and name the new row, and `sqlease --help` lists it."""

    def identity(self):
        key, row = doc_row("adding-a-dialect-copy")
        return key, row["aliases"][0], row["dbms_names"][0], row["drivers"][0]["match"][0]

    def test_copied_row(self):
        key, alias, dbms, match = self.identity()
        text = copy_row(template_text(), "postgres", key, alias, dbms, match)
        r = self.gen(text)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        out = self.probe(queries=["find:" + key, "find:" + alias, "detect:%s 3.1" % dbms,
                                  "detect:PostgreSQL 15.4"])
        self.assertIn("Q find:%s => %s" % (key, key), out)
        self.assertIn("Q find:%s => %s" % (alias, key), out)
        self.assertIn("Q detect:%s 3.1 => %s" % (dbms, key), out)
        self.assertIn("Q detect:PostgreSQL 15.4 => postgres", out)
        self.assertIn("K " + ", ".join(sorted(real_keys() + [key])), out.splitlines())
        # Its statements are postgres's, with its clock: the same SQL.
        stmts = self.statements(out)
        for st in STATEMENTS + FRAGMENTS:
            self.assertEqual(stmts[(key, st)], stmts[("postgres", st)], st)

        # This file's tests of a whole table, on that one: every per-row
        # check runs on the new row, and says so.  (The others change
        # shipped rows to see them refused: nothing a new row changes.)
        path = os.path.join(self.tmp, REL)
        run = subprocess.run([sys.executable, os.path.abspath(__file__), "RealTemplate",
                              "Inheritance", "Snippets"],
                             env=dict(os.environ, SQLEASE_GEN_TEMPLATE=path,
                                      SQLEASE_RESULT_DIR=""),
                             cwd=self.tmp, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        for test in ("test_statements", "test_batched_statements", "test_detect_find_keys"):
            line = [l for l in run.stderr.splitlines() if l.startswith(test + ": checked rows")]
            self.assertEqual(len(line), 1, run.stderr)
            self.assertIn(key, line[0].split(" rows ", 1)[1].split(", "), line[0])

        # --help, as src/cli/usage.c prints it from that table.
        out_dir = os.path.join(self.tmp, "out")
        with open(os.path.join(out_dir, "help.c"), "w") as f:
            f.write('#include "cli.h"\n'
                    'const char *sqlease_version(void) { return "0"; }\n'
                    '/* src/cli/http.c, which --help asks whether --http is built in */\n'
                    'int cli_http_available(void) { return 1; }\n'
                    'int main(void) { cli_print_help(); return 0; }\n')
        exe = os.path.join(out_dir, "help")
        # The project's flags (SConstruct): the help text is one long
        # string, longer than -Wpedantic lets C99 promise.
        cc = subprocess.run([CC, "-std=c11", "-Wall", "-Wextra", "-Werror", "-D_DEFAULT_SOURCE",
                             "-I", out_dir, "-I", SRC, "-I", INCLUDE,
                                             "-I", os.path.join(SRC, "cli"), "-o", exe,
                                             os.path.join(SRC, "cli", "usage.c"), DIALECT_C,
                                             os.path.join(out_dir, "dialects.c"),
                                             os.path.join(out_dir, "help.c")],
                            capture_output=True, text=True)
        self.assertEqual(cc.returncode, 0, cc.stderr)
        self.assertEqual(cc.stderr, "")
        help_text = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
        flag = help_text[help_text.index("  --dialect X"):help_text.index("  --query-timeout")]
        for k in real_keys() + [key]:
            self.assertIn(k, flag)
        self.assertIn("%s (or %s)" % (key, alias), " ".join(flag.split()))
        # Wrapped between rows, under the flags' text column.
        self.assertTrue(all(len(l) <= 79 for l in flag.splitlines()), flag)
        self.assertTrue(all(l.startswith(" " * 23) for l in flag.splitlines()[1:]), flag)

    def test_copy_row(self):
        # The copy is the row and its sub-tables, renamed, and only the
        # identity changed: what the document's block shows.
        key, alias, dbms, match = self.identity()
        text = copy_row(template_text(), "postgres", key, alias, dbms, match)
        rows = tomllib.loads(text)
        old, new = rows["postgres"], rows[key]
        doc = doc_row("adding-a-dialect-copy")[1]
        for field in ("aliases", "dbms_names", "drivers"):
            self.assertEqual(new[field], doc[field], field)
        self.assertEqual(new["drivers"][0]["settings"], old["drivers"][0]["settings"])
        self.assertEqual(new["failures"], old["failures"])
        self.assertEqual({k: v for k, v in new.items()
                          if k not in ("aliases", "dbms_names", "drivers")},
                         {k: v for k, v in old.items()
                          if k not in ("aliases", "dbms_names", "drivers")})


if __name__ == "__main__":
    import run_tests  # tests/run_tests.py: unittest.main() that leaves a result file

    run_tests.unittest_main()
