#!/usr/bin/env python3
"""Turn the dialect table (templates/dialects.toml) into C.

Usage: gen_dialects.py TEMPLATE.toml OUT.c OUT.h

The table has one row of defaults, [common], and one row per dialect that
gives its identity (now_ms, dbms_names, aliases) and only the fields in
which it differs from [common]; every other field is [common]'s, with the
row's own clock pasted in for {now} and the row's own snippets (SNIPPETS)
for theirs.  The failure rules ([row.failures]) are the exception: a
row's lists add to [common]'s.

Standard library only.  The output is deterministic: dialects sorted by
key, no timestamps, no absolute paths.  A malformed table is rejected with
one message per problem on stderr, each naming the row and the field, and
exit status 1; nothing is written then.
"""

import os
import re
import sys
import tomllib

TEMPLATE_NAME = "templates/dialects.toml"
GENERATOR_NAME = "gen/gen_dialects.py"

# The bound parameters, in enum order: (TOML name, type, field of db_params
# in src/db.h that holds its value, what it is).  This is the only list of
# them: the generator emits the enum sqle_param and the binding table
# SQLEASE_PARAM_LIST from it, and db.c binds every statement through that
# table.  A new parameter is a line here, a field of db_params, and the
# statements (below and in the template) that use it.
PARAM_LIST = (
    ("name", "text", "name", "lease name"),
    ("owner", "text", "owner", "owner id"),
    ("ttl_ms", "int64", "ttl_ms", "lease TTL in ms"),
    ("token", "int64", "token", "fencing token of the hold (the take: the token its read saw)"),
    ("min_hold_ms", "int64", "min_hold_ms", "minimum hold from acquired_at_ms; 0: none"),
    ("data", "text", "data", "the holder's published value; NULL: SQL NULL"),
    ("version", "int64", "version", "the row's version a watched take is bound to"),
    # The fire ledger (the fire table): one scheduled fire of a job.
    ("job", "text", "job", "job name (the fire table); '' in fire_list: every job"),
    ("fire_at_ms", "int64", "fire_at_ms", "a fire's scheduled instant, epoch ms"),
    ("state", "text", "state", "a fire's state ('done', 'failed', 'skipped', ...)"),
    ("attempt", "int64", "attempt", "the attempt of a fire a statement is about"),
    ("host", "text", "host", "the host name a fire runs on"),
    ("has_exit", "int64", "has_exit", "1: :exit_status is the job's exit status; 0: none"),
    ("exit_status", "int64", "exit_status", "a finished fire's exit status"),
    ("note", "text", "note", "why a fire was skipped, missed or abandoned; NULL: none"),
    ("since_ms", "int64", "since_ms", "a window's first fire_at_ms (included)"),
    ("before_ms", "int64", "before_ms", "a window's end (fire_at_ms below it)"),
    # The holder history (the history table): one hold of a lease.
    ("pid", "int64", "pid", "the holder's process id"),
    ("ended_at_ms", "int64", "ended_at_ms",
     "when a hold ended, epoch ms; in hold_start 0: no hold to close"),
    # The hand-over: the taker's priority, whom a hand-over is for, how
    # long it reserves the row, and the start of the ready rows' names.
    ("priority", "int64", "priority", "the taker's priority, written by every take"),
    ("target", "text", "target", "the owner id a hand-over is for ('*' in a request: the best)"),
    ("reserve_ms", "int64", "reserve_ms", "how long a hand-over reserves the row, in ms"),
    ("prefix", "text", "prefix", "the start of the names ready_list reads"),
)
PARAM_TYPES = {"text": "SQLEASE_PARAM_TEXT", "int64": "SQLEASE_PARAM_INT64"}

# TOML name -> (enum constant, value).
PARAMS = {name: ("SQLEASE_P_" + name.upper(), i) for i, (name, _, _, _) in enumerate(PARAM_LIST)}

# The tables a statement names, substituted at run time after the
# identifier has been validated: {table} (the lease table),
# {fire_table} (the fire ledger) and {history_table} (the holder
# history).  A statement names exactly the ones it
# lists: the library substitutes only those it expects (a lease
# statement that named {fire_table} would reach the server with the
# braces in it).
LEASE = ("table",)
FIRE = ("fire_table",)
BOTH = ("table", "fire_table")
HIST = ("history_table",)
LEASE_HIST = ("table", "history_table")
TABLE_PLACEHOLDERS = ("table", "fire_table", "history_table")

# Statements, in struct order: name -> (required params, allowed params,
# the tables it names, each required and no other allowed).
STATEMENTS = {
    "now": (set(), set(), ()),
    "create_table": (set(), set(), LEASE),
    "probe_token": (set(), set(), LEASE),
    "add_token": (set(), set(), LEASE),
    "probe_version": (set(), set(), LEASE),
    "add_version": (set(), set(), LEASE),
    "probe_data": (set(), set(), LEASE),
    "add_data": (set(), set(), LEASE),
    # The holder's ttl as its take wrote it, and who held the row last.
    "probe_ttl": (set(), set(), LEASE),
    "add_ttl": (set(), set(), LEASE),
    "probe_last_owner": (set(), set(), LEASE),
    "add_last_owner": (set(), set(), LEASE),
    # The last fire a take of the lease claimed (take_fire).
    "probe_fire_at": (set(), set(), LEASE),
    "add_fire_at": (set(), set(), LEASE),
    # Whom a hand-over is for, and the holder's priority (the hand-over).
    "probe_handoff_to": (set(), set(), LEASE),
    "add_handoff_to": (set(), set(), LEASE),
    "probe_priority": (set(), set(), LEASE),
    "add_priority": (set(), set(), LEASE),
    # NULLs of an older table made by hand, filled in before make_exact.
    "fill_nulls": (set(), set(), LEASE),
    # The same for one row whose read showed a NULL, before it is taken.
    "repair": ({"name"}, {"name"}, LEASE),
    "probe_exact": (set(), set(), LEASE),
    "make_exact": (set(), set(), LEASE),
    "seed": ({"name"}, {"name"}, LEASE),
    # The take is bound to the token the follower's read saw; every take
    # writes the taker's priority.
    "acquire": ({"name", "owner", "ttl_ms", "token", "data", "priority"},
                {"name", "owner", "ttl_ms", "token", "data", "priority"}, LEASE),
    # A watching follower's take of a row it saw unchanged for a ttl:
    # bound to the token and version its reads saw, not to the expiry.
    "take_watched": ({"name", "owner", "ttl_ms", "token", "data", "version", "priority"},
                     {"name", "owner", "ttl_ms", "token", "data", "version", "priority"},
                     LEASE),
    # acquire's take that also claims the fire :fire_at_ms for the hold:
    # only while the row's last claimed fire is before it.
    "take_fire": ({"name", "owner", "ttl_ms", "token", "data", "fire_at_ms", "priority"},
                  {"name", "owner", "ttl_ms", "token", "data", "fire_at_ms", "priority"},
                  LEASE),
    "renew": ({"name", "owner", "ttl_ms", "token"}, {"name", "owner", "ttl_ms", "token"}, LEASE),
    "release": ({"name", "owner", "token", "min_hold_ms"},
                {"name", "owner", "token", "min_hold_ms"}, LEASE),
    "release_force": ({"name"}, {"name"}, LEASE),
    "status": ({"name"}, {"name"}, LEASE),
    # Every row after :name, in name order (one page per call).
    "list": ({"name"}, {"name"}, LEASE),
    # ---- the hand-over (see the template's header) ----
    # Ask the live hold (owner, token) as read to hand over to :target.
    "handoff_request": ({"name", "owner", "token", "target", "min_hold_ms"},
                        {"name", "owner", "token", "target", "min_hold_ms"}, LEASE),
    # Withdraw that request (the hold and the target it named).
    "handoff_cancel": ({"name", "owner", "token", "target"},
                       {"name", "owner", "token", "target"}, LEASE),
    # The holder's hand-over of its hold: free, reserved for :target.
    "handoff": ({"name", "owner", "token", "target", "reserve_ms"},
                {"name", "owner", "token", "target", "reserve_ms"}, LEASE),
    # The rows whose name starts with :prefix (the ready followers').
    "ready_list": ({"prefix"}, {"prefix"}, LEASE),
    # ---- the fire ledger: one row per fire of a job of a lease name ----
    "fire_create_table": (set(), set(), FIRE),
    # A holder's claim of a fire that has no row, fenced by its hold and
    # by the fire's time on the database's clock.
    "fire_claim": ({"name", "owner", "token", "job", "fire_at_ms", "host"},
                   {"name", "owner", "token", "job", "fire_at_ms", "host"}, BOTH),
    # A holder's rerun of an abandoned fire, bound to the attempt it read.
    "fire_reclaim": ({"name", "owner", "token", "job", "fire_at_ms", "host", "attempt"},
                     {"name", "owner", "token", "job", "fire_at_ms", "host", "attempt"}, BOTH),
    # How a claimed run ended (not fenced: a run that lost its lease
    # still says how it ended, unless its row was marked abandoned).
    "fire_end": ({"name", "token", "job", "fire_at_ms", "attempt", "state", "has_exit",
                  "exit_status", "note"},
                 {"name", "token", "job", "fire_at_ms", "attempt", "state", "has_exit",
                  "exit_status", "note"}, FIRE),
    # A fenced row for a fire that did not run (skipped, missed, abandoned).
    "fire_record": ({"name", "owner", "token", "job", "fire_at_ms", "host", "state", "note"},
                    {"name", "owner", "token", "job", "fire_at_ms", "host", "state", "note"},
                    BOTH),
    # A new holder marks the running rows of older holds abandoned.
    "fire_abandon": ({"name", "owner", "token", "note"}, {"name", "owner", "token", "note"},
                     BOTH),
    # Per job of a lease name (after :job, in job order), its latest fire.
    "fire_last": ({"name", "job"}, {"name", "job"}, FIRE),
    # One fire's row (NULLs when it has none), whether the hold (:owner,
    # :token) is live, and the clock.
    "fire_read": ({"name", "owner", "token", "job", "fire_at_ms"},
                  {"name", "owner", "token", "job", "fire_at_ms"}, BOTH),
    # The rows of a window of fire_at_ms, newest first.
    "fire_list": ({"name", "job", "since_ms", "before_ms"},
                  {"name", "job", "since_ms", "before_ms"}, FIRE),
    # Delete a window of one lease name's finished rows.
    "fire_prune": ({"name", "since_ms", "before_ms"}, {"name", "since_ms", "before_ms"}, FIRE),
    # The outcome row of the fire a take_fire claimed, fenced by its token.
    "fire_done": ({"name", "token", "job", "fire_at_ms", "host", "state", "has_exit",
                   "exit_status"},
                  {"name", "token", "job", "fire_at_ms", "host", "state", "has_exit",
                   "exit_status"}, BOTH),
    # ---- the holder history: one row per hold of a lease name ----
    "hold_create_table": (set(), set(), HIST),
    # The taker's row of its new hold, read from the lease row while it
    # shows that hold; a dialect whose statement binds :ended_at_ms also
    # closes the hold before it (token - 1) when that is above 0.
    "hold_start": ({"name", "owner", "token", "host", "pid"},
                   {"name", "owner", "token", "host", "pid", "ended_at_ms"}, LEASE_HIST),
    # The taker closes the hold it took over (token) as expired.
    "hold_expire": ({"name", "token", "ended_at_ms"}, {"name", "token", "ended_at_ms"}, HIST),
    # The holder closes its own hold (token) as :state, at the next
    # hold's start at the latest (read from the lease row).
    "hold_end": ({"name", "token", "state"}, {"name", "token", "state"}, LEASE_HIST),
    # An operator's forced release closes the hold the row was freed from.
    "hold_force": ({"name", "token"}, {"name", "token"}, LEASE_HIST),
    # A window of started_at_ms, newest first, with the end before each.
    "hold_list": ({"name", "since_ms", "before_ms"}, {"name", "since_ms", "before_ms"}, HIST),
    # Delete a window of one lease name's ended holds.
    "hold_prune": ({"name", "since_ms", "before_ms"}, {"name", "since_ms", "before_ms"}, HIST),
}

# The most markers a statement may have: src/db.c binds a generated
# statement from an array of this size.
STATEMENT_MAX_MARKERS = 16

# Predicates the caller pastes into a statement of its own, in the same
# shape as STATEMENTS.  Checked like a statement, and also as one
# expression: balanced parentheses, no ';', not a statement itself.
FRAGMENTS = {
    "fence": ({"name", "owner", "token"}, {"name", "owner", "token"}, LEASE),
}

# Snippets: named pieces of SQL that statements are written with, pasted
# in where a statement, a predicate, a batched statement's head or tail
# or a session setup says {name}.  [common] gives each its default and
# writes its statements with them, so that a row whose DBMS spells one of
# them differently (an `=` that pads trailing spaces, a SELECT that needs
# a table) sets the snippet and inherits the statements.  They are the
# generator's alone: nothing of them reaches the C but the statements
# they are pasted into.  name -> (required params, allowed params,
# whether it may be empty).  A snippet holds no placeholder.
SNIPPETS = {
    # The row's name is :name, as exact bytes (no case, accent or
    # trailing-space folding).
    "name_equals": ({"name"}, {"name"}, False),
    # The row's owner is :owner, as exact bytes.
    "owner_equals": ({"owner"}, {"owner"}, False),
    # The row's owner is the empty string (a free row).
    "owner_free": (set(), set(), False),
    # What a SELECT that reads no table needs after its select list: ''
    # or a one-row table (FROM DUAL).
    "from_dual": (set(), set(), True),
    # The column types (their widths are sqlease.h's SQLEASE_MAX_NAME,
    # SQLEASE_MAX_OWNER and SQLEASE_MAX_DATA).
    "name_type": (set(), set(), False),
    "owner_type": (set(), set(), False),
    "data_type": (set(), set(), False),
    # Column options: of name and owner, what makes them compare as exact
    # bytes (a binary collation); of data, its character set.
    "exact_collation": (set(), set(), True),
    "data_charset": (set(), set(), True),
    # ALTER TABLE's words for adding a column.
    "add_column": (set(), set(), False),
    # What follows an INSERT ... VALUES so that a row whose name exists
    # already is left as it is (and is no error).
    "ignore_existing": (set(), set(), False),
    # The batched statements' row values: a row's (name, owner, token)
    # and a hold's bound ones, compared with IN as exact bytes; and the
    # same of the name alone.
    "hold_key": (set(), set(), False),
    "hold_value": ({"name", "owner", "token"}, {"name", "owner", "token"}, False),
    "name_key": (set(), set(), False),
    "name_value": ({"name"}, {"name"}, False),
    # A row as its read saw it (name, token, version), for the batched take.
    "take_key": (set(), set(), False),
    "take_value": ({"name", "token", "version"}, {"name", "token", "version"}, False),
    # The fire table's: the row's job is :job, as exact bytes; the types
    # of the job, host, note and state columns (their widths are
    # sqlease.h's SQLEASE_MAX_JOB, _HOST, _NOTE and _STATE).
    "job_equals": ({"job"}, {"job"}, False),
    "job_type": (set(), set(), False),
    "host_type": (set(), set(), False),
    "note_type": (set(), set(), False),
    "state_type": (set(), set(), False),
    # An insert of a fire's row that leaves a fire that has one alone (no
    # error, 0 rows): the words that start it, and what follows its
    # SELECT (may be empty).
    "fire_insert": (set(), set(), False),
    "fire_if_absent": (set(), set(), True),
    # The same for an insert of a hold's row (key: name, token).
    "hold_insert": (set(), set(), False),
    "hold_if_absent": (set(), set(), True),
    # The hand-over's column: it carries none (''; NULL in a table made
    # by hand counts as none), it is :owner, it is :target, each as
    # exact bytes; and a name that starts with :prefix.
    "no_handoff": (set(), set(), False),
    "handoff_owner": ({"owner"}, {"owner"}, False),
    "handoff_target": ({"target"}, {"target"}, False),
    "name_prefix": ({"prefix"}, {"prefix"}, False),
}

# Comparisons that a statement of [common] must spell with a snippet, so
# that a row whose `=` pads or folds gets its exact form: (pattern in the
# text from the first WHERE on, or anywhere in a predicate; snippet).
COMMON_SPELLED_BY_SNIPPET = (
    (re.compile(r"(?<![\w.])name\s*=\s*:name\b"), "name = :name", "name_equals"),
    (re.compile(r"(?<![\w.])owner\s*=\s*:owner\b"), "owner = :owner", "owner_equals"),
    (re.compile(r"(?<![\w.])owner\s*=\s*''"), "owner = ''", "owner_free"),
    (re.compile(r"(?<![\w.])job\s*=\s*:job\b"), "job = :job", "job_equals"),
    (re.compile(r"(?<![\w.])handoff_to\s*=\s*''"), "handoff_to = ''", "no_handoff"),
    (re.compile(r"(?<![\w.])handoff_to\s*=\s*:owner\b"), "handoff_to = :owner",
     "handoff_owner"),
    (re.compile(r"(?<![\w.])handoff_to\s*=\s*:target\b"), "handoff_to = :target",
     "handoff_target"),
)
WHERE_RE = re.compile(r"\bWHERE\b", re.I)

# Batched statements: one statement for many leases of one table.  Each
# repeats one lease's part, written once as {each: ITEM}, for every lease
# it carries (the items separated by EACH_SEP), so that the library builds
# the text for n leases from the parts the generator emits: the head (the
# text before {each: ...}), the item, the separator and the tail (the text
# after).  name -> (required params of head and tail, allowed ones,
# required params of the item, allowed ones[, the tables it names]).  The
# tables (default: {table} alone) must be in the head or the tail; the
# item takes {now} and the snippets, no other placeholder.
EACH_STATEMENTS = {
    # The holders' renew of many holds: each item is one hold (name,
    # owner, token); one ttl for them all.  It answers which rows it
    # renewed (their name, owner and token) when renew_each_returns is
    # true, else only how many.
    "renew_each": ({"ttl_ms"}, {"ttl_ms"}, {"name", "owner", "token"},
                   {"name", "owner", "token"}),
    # After a renew_each that can only count and counted fewer rows than
    # holds: which of the holds are live now (name, owner, token of each).
    "renewed_each": (set(), set(), {"name", "owner", "token"}, {"name", "owner", "token"}),
    # The followers' read of many rows: status's columns after the name.
    "status_each": (set(), set(), {"name"}, {"name"}),
    # migrate's seed of many names: a row for each name that has none,
    # as `seed` makes it; names that have one are left alone.
    "seed_each": (set(), set(), {"name"}, {"name"}),
    # The take of many rows as a read saw them: each item one row (name,
    # and the token and version its read saw); one owner, ttl and data
    # for them all.
    "take_each": ({"owner", "ttl_ms", "data", "priority"},
                  {"owner", "ttl_ms", "data", "priority"},
                  {"name", "token", "version"}, {"name", "token", "version"}),
    # The release of many holds (name, owner, token each); one minimum
    # hold for them all.
    "release_each": ({"min_hold_ms"}, {"min_hold_ms"}, {"name", "owner", "token"},
                     {"name", "owner", "token"}),
    # The holder history of many holds (name, owner, token each): the
    # rows of the holds a batched take took (one host and pid), the ends
    # of the holds it took over (one :ended_at_ms), the ends a batched
    # release or renew found (one :state).
    "hold_start_each": ({"host", "pid"}, {"host", "pid"}, {"name", "owner", "token"},
                        {"name", "owner", "token"}, LEASE_HIST),
    "hold_expire_each": ({"ended_at_ms"}, {"ended_at_ms"}, {"name", "owner", "token"},
                         {"name", "owner", "token"}, HIST),
    "hold_end_each": ({"state"}, {"state"}, {"name", "owner", "token"},
                      {"name", "owner", "token"}, LEASE_HIST),
}
EACH_SEP = ", "
# The snippets [common]'s batched statements compare rows with: a row
# that sets its own name_equals or owner_equals and inherits one of these
# statements must set them too.
EACH_SNIPPETS = {
    "renew_each": ("hold_key", "hold_value"),
    "renewed_each": ("hold_key", "hold_value"),
    "status_each": ("name_key", "name_value"),
    "take_each": ("take_key", "take_value"),
    "release_each": ("hold_key", "hold_value"),
    "hold_start_each": ("hold_key", "hold_value"),
    "hold_expire_each": ("hold_key", "hold_value"),
    "hold_end_each": ("hold_key", "hold_value"),
}

# The most parameters src/odbc.c binds in one statement (sqle_odbc's
# exec refuses more, whatever max_params says): a batched statement at
# batch_max must stay within it too.
BIND_MAX = 32767

# At most this many markers in a fragment: the library hands the values
# to bind in a fixed array of this size (SQLEASE_FENCE_MAX_VALUES).
FRAGMENT_MAX_MARKERS = 16

# Words a fragment must not start with: it would be a statement, not a
# predicate.
STATEMENT_WORDS = ("SELECT", "INSERT", "UPDATE", "DELETE", "MERGE", "WITH", "CREATE", "ALTER",
                   "DROP", "SET", "BEGIN", "COMMIT", "ROLLBACK", "CALL", "EXEC", "EXECUTE",
                   "DECLARE", "IF", "SHOW", "PRAGMA", "VALUES", "REPLACE", "TRUNCATE", "GRANT")

# How the library writes a bound value as a literal of the dialect
# (string_literal): TOML value -> C enum constant.
LITERAL_STYLES = {
    "standard": "SQLEASE_LIT_STANDARD",
    "postgres_escape": "SQLEASE_LIT_POSTGRES_ESCAPE",
    "mysql": "SQLEASE_LIT_MYSQL",
}

STRING_FIELDS = ("now_ms", "string_literal")
LIST_FIELDS = ("aliases", "dbms_names", "session_setup")
# Positive integers: the most leases one batched statement carries, and
# the most bound parameters the dialect's server (or driver) accepts in
# one statement; the generator checks that every batched statement at
# batch_max leases stays within max_params.
INT_FIELDS = ("batch_max", "max_params")
BOOL_FIELDS = ("renew_each_returns",)
FIELDS = (("now_ms",) + LIST_FIELDS + ("drivers",) + tuple(SNIPPETS) + tuple(STATEMENTS)
          + tuple(FRAGMENTS) + tuple(EACH_STATEMENTS) + BOOL_FIELDS + INT_FIELDS
          + ("string_literal", "failures"))

# How a failure is recognised (src/classify.c), in struct order: the
# sub-table `failures` of a row, each a list of SQLSTATEs (five
# characters, or two for a whole class) or of message phrases
# (case-insensitive substrings).  A row's lists add to [common]'s: the
# classifier reads both, and [common]'s alone while the dialect is not
# known yet (at the first connect).
FAILURE_FIELDS = (
    ("timeout_sqlstates", "sqlstates"),
    ("connection_lost_sqlstates", "sqlstates"),
    ("connection_lost_messages", "messages"),
    ("missing_table_sqlstates", "sqlstates"),
    ("missing_table_messages", "messages"),
    ("generic_sqlstates", "sqlstates"),
    ("serialization_sqlstates", "sqlstates"),
    ("locked_messages", "messages"),
    ("privilege_sqlstates", "sqlstates"),
    ("privilege_messages", "messages"),
    ("config_sqlstates", "sqlstates"),
    ("config_messages", "messages"),
)

# The row of defaults: every other row inherits each field it does not
# give from it.
COMMON = "common"

# A row's identity, never inherited: its clock, the SQL_DBMS_NAME
# substrings that detect it and the other names --dialect accepts.  In
# [common] each would be wrong for all rows but one (or make every row
# match every DBMS); aliases may be left out of a row (no other name).
ROW_ONLY = {
    "now_ms": "each dialect reads its own clock",
    "aliases": "an alias names one row",
    "dbms_names": "a DBMS name detects one row",
}
OPTIONAL_FIELDS = {"aliases": []}

# What {now} stands for while [common]'s statements are checked on their
# own; each dialect's clock is pasted in when it inherits them.
COMMON_NOW = "0"

# What a driver setting's value may refer to: the handle's timeouts,
# filled in at run time (odbc.c).  {{ and }} are literal braces.
DRIVER_PLACEHOLDERS = ("login_s", "query_s", "query_ms", "query_half_ms")
SETTING_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

ROW_KEY_RE = re.compile(r"[a-z][a-z0-9_]*")
SQLSTATE_RE = re.compile(r"[0-9A-Z]{2}(?:[0-9A-Z]{3})?")
PLACEHOLDER_RE = re.compile(r"\{([^{}]*)\}")
# {each: ITEM} whose ITEM holds placeholders ({now}, snippets) of its own.
EACH_SPAN_RE = re.compile(r"\{(\s*each\s*:(?:[^{}]|\{[^{}]*\})*)\}")
# The repetition construct of a batched statement, {each: ITEM}, as the
# inside of a placeholder.
EACH_RE = re.compile(r"\s*each\s*:")


class FieldError(Exception):
    """A problem with one field's value."""


class SaidAlready(Exception):
    """A field that uses a snippet whose own error has been reported: not
    reported again."""


def type_name(value):
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return "a date or time"


def substitute_placeholders(text, now_ms, tables, snippets=None):
    """Replace {now} by now_ms and each snippet's {name} by its text (the
    row's); keep the table placeholders listed in `tables` ({table},
    {fire_table}); reject anything else.  Returns the text and the set of
    table placeholders it used.  A snippet mapped to None failed its own
    check: SaidAlready."""
    out = []
    pos = 0
    used = set()
    while True:
        i = text.find("{", pos)
        if i < 0:
            out.append(text[pos:])
            break
        m = PLACEHOLDER_RE.match(text, i)
        if not m:
            raise FieldError("unclosed '{' at offset %d" % i)
        out.append(text[pos:i])
        name = m.group(1)
        if name == "now" and now_ms is not None:
            out.append(now_ms)
        elif name in TABLE_PLACEHOLDERS and name in tables:
            out.append(m.group(0))
            used.add(name)
        elif name == "now" or name in TABLE_PLACEHOLDERS:
            raise FieldError("placeholder '{%s}' is not allowed here" % name)
        elif snippets is not None and name in SNIPPETS:
            if name not in snippets:
                raise FieldError("snippet '{%s}' is set neither in the row nor in [common]"
                                 % name)
            if snippets[name] is None:
                raise SaidAlready(name)
            out.append(snippets[name])
        elif EACH_RE.match(name):
            raise FieldError("'{each: ...}' is only allowed in a batched statement (%s)"
                             % ", ".join(EACH_STATEMENTS))
        else:
            raise FieldError("unknown placeholder '{%s}' (known: {now}, %s%s)"
                             % (name, ", ".join("{%s}" % t for t in TABLE_PLACEHOLDERS),
                                "".join(", {%s}" % n for n in SNIPPETS)
                                if snippets is not None else ""))
        pos = m.end()
    return "".join(out), used


def lex_sql(text, allow_params):
    """Collapse whitespace outside quotes, turn :param into ?.

    Returns (sql, [param names in order]).  String literals ('...') and
    quoted identifiers ("...", `...`) are copied verbatim; `::` is a cast;
    SQL comments and bare `?` markers are rejected.
    """
    out = []
    params = []
    i = 0
    n = len(text)
    pending_space = False
    while i < n:
        c = text[i]
        if c.isspace():
            pending_space = True
            i += 1
            continue
        if pending_space and out:
            out.append(" ")
        pending_space = False
        if c in "'\"`":
            j = i + 1
            while True:
                if j >= n:
                    raise FieldError("unterminated quoted text starting at offset %d" % i)
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:  # doubled quote
                        j += 2
                        continue
                    break
                j += 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "-" and text.startswith("--", i):
            raise FieldError("SQL comment '--' in a statement (use a TOML '#' comment)")
        elif c == "/" and text.startswith("/*", i):
            raise FieldError("SQL comment '/*' in a statement (use a TOML '#' comment)")
        elif c == "?":
            raise FieldError("bare '?' marker (use a named parameter: %s)"
                             % ", ".join(":" + p for p in PARAMS))
        elif c == ":":
            if text.startswith("::", i):
                out.append("::")
                i += 2
                continue
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").match(text, i + 1)
            if not m:
                out.append(c)
                i += 1
                continue
            word = m.group(0)
            if word not in PARAMS:
                raise FieldError("unknown parameter ':%s' (known: %s)"
                                 % (word, ", ".join(":" + p for p in PARAMS)))
            if not allow_params:
                raise FieldError("parameter ':%s' is not allowed here" % word)
            out.append("?")
            params.append(word)
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out), params


def check_statement(field, value, now_ms, snippets=None):
    required, allowed, tables = STATEMENTS[field] if field in STATEMENTS \
        else FRAGMENTS[field]
    text = value.strip()
    if not text:
        raise FieldError("empty statement")
    text, used_tables = substitute_placeholders(text, now_ms, tables, snippets=snippets)
    sql, params = lex_sql(text, allow_params=True)
    used = set(params)
    extra = sorted(used - allowed, key=list(PARAMS).index)
    if extra:
        raise FieldError("unexpected parameter%s %s (this statement takes %s)"
                         % ("s" if len(extra) > 1 else "",
                            ", ".join(":" + p for p in extra),
                            ", ".join(":" + p for p in PARAMS if p in allowed) or "none"))
    missing = sorted(required - used, key=list(PARAMS).index)
    if missing:
        raise FieldError("missing parameter%s %s"
                         % ("s" if len(missing) > 1 else "",
                            ", ".join(":" + p for p in missing)))
    for t in tables:
        if t not in used_tables:
            raise FieldError("statement does not use {%s}" % t)
    if field in STATEMENTS and len(params) > STATEMENT_MAX_MARKERS:
        raise FieldError("%d markers; src/db.c binds at most %d in a statement"
                         % (len(params), STATEMENT_MAX_MARKERS))
    return sql, params


def check_expression(sql):
    """A fragment (already lexed: whitespace collapsed, markers as ?) must
    be one expression the caller can put after AND: parentheses balanced
    outside quoted text, no ';', and not a statement of its own."""
    m = re.match(r"[A-Za-z_]+", sql)
    if m and m.group(0).upper() in STATEMENT_WORDS:
        raise FieldError("a predicate, not a statement: it starts with '%s'" % m.group(0))
    depth = 0
    i = 0
    while i < len(sql):
        c = sql[i]
        if c in "'\"`":
            j = i + 1
            while j < len(sql):
                if sql[j] == c:
                    if j + 1 < len(sql) and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            i = j + 1
            continue
        if c == ";":
            raise FieldError("';' in a predicate (it would end the caller's statement)")
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise FieldError("')' at offset %d closes nothing" % i)
        i += 1
    if depth:
        raise FieldError("%d '(' not closed" % depth)


def check_fragment(field, value, now_ms, snippets=None):
    sql, params = check_statement(field, value, now_ms, snippets)
    check_expression(sql)
    if len(params) > FRAGMENT_MAX_MARKERS:
        raise FieldError("%d markers; at most %d" % (len(params), FRAGMENT_MAX_MARKERS))
    return sql, params


def check_params(used, required, allowed, what="", noun="this statement"):
    """The parameters a part uses against the ones it must and may use."""
    extra = sorted(set(used) - allowed, key=list(PARAMS).index)
    if extra:
        raise FieldError("%sunexpected parameter%s %s (%s takes %s)"
                         % (what, "s" if len(extra) > 1 else "",
                            ", ".join(":" + p for p in extra),
                            "it" if what else noun,
                            ", ".join(":" + p for p in PARAMS if p in allowed) or "none"))
    missing = sorted(required - set(used), key=list(PARAMS).index)
    if missing:
        raise FieldError("%smissing parameter%s %s"
                         % (what, "s" if len(missing) > 1 else "",
                            ", ".join(":" + p for p in missing)))


def check_each(field, value, now_ms, snippets=None):
    """A batched statement: exactly one {each: ITEM}.  Returns a dict of
    its parts, each lexed on its own: head, item, tail (sql and params)
    and the separator."""
    head_req, head_allowed, item_req, item_allowed = EACH_STATEMENTS[field][:4]
    tables = EACH_STATEMENTS[field][4] if len(EACH_STATEMENTS[field]) > 4 else LEASE
    text = value.strip()
    if not text:
        raise FieldError("empty statement")
    spans = []
    pos = 0
    while True:
        i = text.find("{", pos)
        if i < 0:
            break
        m = PLACEHOLDER_RE.match(text, i)
        if not m and EACH_RE.match(text, i + 1):
            # An item may hold {now} and snippets: its end is the brace
            # that closes it.
            m = EACH_SPAN_RE.match(text, i)
            if not m:
                raise FieldError("'{each: ...}' at offset %d is not closed, or holds a "
                                 "'{each' or an unclosed '{'" % i)
        if not m:
            raise FieldError("unclosed '{' at offset %d" % i)
        if EACH_RE.match(m.group(1)):
            spans.append(m)
        pos = m.end()
    if not spans:
        raise FieldError("a batched statement needs one '{each: ...}' (the part repeated "
                         "for every lease)")
    if len(spans) > 1:
        raise FieldError("%d '{each: ...}'; a batched statement has exactly one" % len(spans))
    m = spans[0]
    head_text, tail_text = text[:m.start()], text[m.end():]
    item_text = m.group(1)[EACH_RE.match(m.group(1)).end():].strip()
    if not item_text:
        raise FieldError("'{each: ...}' is empty")
    if ";" in item_text:
        raise FieldError("';' in '{each: ...}'")
    try:
        item_text, item_table = substitute_placeholders(item_text, now_ms, (),
                                                        snippets=snippets)
    except FieldError as e:
        raise FieldError("'{each: ...}': %s" % e) from None
    head_text, head_table = substitute_placeholders(head_text, now_ms, tables,
                                                    snippets=snippets)
    tail_text, tail_table = substitute_placeholders(tail_text, now_ms, tables,
                                                    snippets=snippets)
    head_sql, head_params = lex_sql(head_text, allow_params=True)
    tail_sql, tail_params = lex_sql(tail_text, allow_params=True)
    try:
        item_sql, item_params = lex_sql(item_text, allow_params=True)
        check_params(item_params, item_req, item_allowed)
    except FieldError as e:
        raise FieldError("'{each: ...}': %s" % e) from None
    check_params(head_params + tail_params, head_req, head_allowed)
    for t in tables:
        if t not in head_table | tail_table:
            raise FieldError("statement does not use {%s}" % t)
    # The parts are joined as they are: keep the blank that stood between
    # a part and the construct.
    if head_sql and head_text[-1:].isspace():
        head_sql += " "
    if tail_sql and tail_text[:1].isspace():
        tail_sql = " " + tail_sql
    return {"head": (head_sql, head_params), "item": (item_sql, item_params), "sep": EACH_SEP,
            "tail": (tail_sql, tail_params)}


def each_nparams(st, n):
    """Bound parameters of batched statement `st` carrying n leases."""
    return len(st["head"][1]) + n * len(st["item"][1]) + len(st["tail"][1])


def check_types(field, value):
    """The TOML type of one field's value."""
    if field in LIST_FIELDS:
        if not isinstance(value, list):
            raise FieldError("expected a list of strings, got %s" % type_name(value))
        for idx, item in enumerate(value):
            if not isinstance(item, str):
                raise FieldError("expected a list of strings, item %d is %s"
                                 % (idx + 1, type_name(item)))
    elif field == "drivers":
        if not isinstance(value, list):
            raise FieldError("expected a list of tables, got %s" % type_name(value))
    elif field == "failures":
        if not isinstance(value, dict):
            raise FieldError("expected a table of lists, got %s" % type_name(value))
    elif field in INT_FIELDS:
        if isinstance(value, bool) or not isinstance(value, int):
            raise FieldError("expected an integer, got %s" % type_name(value))
        if value < 1:
            raise FieldError("%d: must be at least 1" % value)
    elif field in BOOL_FIELDS:
        if not isinstance(value, bool):
            raise FieldError("expected a boolean, got %s" % type_name(value))
    elif not isinstance(value, str):
        raise FieldError("expected a string, got %s" % type_name(value))


def do_now_ms(v):
    text = v.strip()
    if not text:
        raise FieldError("empty expression")
    if "{" in text:
        raise FieldError("placeholders are not allowed in now_ms")
    sql, _ = lex_sql(text, allow_params=False)
    return sql


def do_names(v):
    for idx, s in enumerate(v):
        if not s.strip():
            raise FieldError("item %d is empty (it would match every DBMS)" % (idx + 1))
    return list(v)


def do_aliases(v, key):
    for idx, s in enumerate(v):
        if not ROW_KEY_RE.fullmatch(s):
            raise FieldError("item %d: '%s' must match [a-z][a-z0-9_]*" % (idx + 1, s))
        if s == key:
            raise FieldError("item %d: '%s' is the row's own key" % (idx + 1, s))
        if s == COMMON:
            raise FieldError("item %d: '%s' names the row of defaults" % (idx + 1, s))
    return list(v)


def do_setup(v, now_ms, snippets=None):
    res = []
    for idx, s in enumerate(v):
        try:
            text = s.strip()
            if not text:
                raise FieldError("empty statement")
            text, _ = substitute_placeholders(text, now_ms, (),
                                              snippets=snippets)
            sql, _ = lex_sql(text, allow_params=False)
        except FieldError as e:
            raise FieldError("item %d: %s" % (idx + 1, e)) from None
        res.append(sql)
    return res


def check_failures(value, errors, where_field):
    """The sub-table `failures`: each key a known list, each item a
    SQLSTATE (or a two-character class) or a non-empty phrase.  Errors go
    to `errors`, named by where_field(sub-field); returns the lists that
    passed, every known one present (empty when not given)."""
    known = dict(FAILURE_FIELDS)
    out = {name: [] for name, _ in FAILURE_FIELDS}
    for sub, items in value.items():
        try:
            if sub not in known:
                raise FieldError("unknown field (known: %s)"
                                 % ", ".join(name for name, _ in FAILURE_FIELDS))
            if not isinstance(items, list):
                raise FieldError("expected a list of strings, got %s" % type_name(items))
            for idx, item in enumerate(items):
                if not isinstance(item, str):
                    raise FieldError("expected a list of strings, item %d is %s"
                                     % (idx + 1, type_name(item)))
                if known[sub] == "sqlstates" and not SQLSTATE_RE.fullmatch(item):
                    raise FieldError("item %d: '%s' is not a SQLSTATE (five characters) or a "
                                     "SQLSTATE class (two)" % (idx + 1, item))
                if known[sub] == "messages" and not item.strip():
                    raise FieldError("item %d is empty (it would match every message)"
                                     % (idx + 1))
            out[sub] = list(items)
        except FieldError as e:
            errors.append("%s: %s" % (where_field("failures." + sub), e))
    return out


def do_literal(v):
    if v not in LITERAL_STYLES:
        raise FieldError("'%s' is not a known style (known: %s)"
                         % (v, ", ".join(sorted(LITERAL_STYLES))))
    return v


def do_snippet(field, value):
    """A snippet: SQL with no placeholder, its parameters those SNIPPETS
    allows; returned as written (stripped), since it is pasted into a
    statement before that is lexed."""
    required, allowed, may_be_empty = SNIPPETS[field]
    text = value.strip()
    if not text and not may_be_empty:
        raise FieldError("empty snippet")
    if "{" in text or "}" in text:
        raise FieldError("a snippet holds no placeholder or brace")
    _, params = lex_sql(text, allow_params=True)
    check_params(params, required, allowed, noun="this snippet")
    return text


def check_spelling(field, value):
    """[common]'s statements compare names and owners through the
    snippets, so that every row inherits the comparison its own `=`
    needs; a new statement written with a bare `=` would hand a padding
    DBMS an inexact one."""
    text = value
    if field not in FRAGMENTS:
        m = WHERE_RE.search(text)
        text = text[m.start():] if m else ""
    for rx, spelled, snippet in COMMON_SPELLED_BY_SNIPPET:
        if rx.search(text):
            raise FieldError("compares with '%s': write {%s} instead (in [common], so that a "
                             "row whose '=' pads or folds gets its exact comparison)"
                             % (spelled, snippet))


def check_field(field, value, key, now_ms, snippets=None):
    """Check one field's value as row `key` (whose clock is now_ms, whose
    snippets are `snippets`) has it; return it as the C output needs it.
    Raises FieldError, or SaidAlready for a field that uses a snippet
    whose own error was reported."""
    check_types(field, value)
    if field == "now_ms":
        return do_now_ms(value)
    if field == "dbms_names":
        return do_names(value)
    if field == "aliases":
        return do_aliases(value, key)
    if field == "session_setup":
        return do_setup(value, now_ms, snippets)
    if field == "drivers":
        return check_drivers(value)
    if field in SNIPPETS:
        return do_snippet(field, value)
    if field in STATEMENTS:
        return check_statement(field, value, now_ms, snippets)
    if field in FRAGMENTS:
        return check_fragment(field, value, now_ms, snippets)
    if field in EACH_STATEMENTS:
        return check_each(field, value, now_ms, snippets)
    if field in INT_FIELDS or field in BOOL_FIELDS:
        return value
    if field == "string_literal":
        return do_literal(value)
    raise AssertionError(field)


def check_common(row, errors, where):
    """Check [common] on its own (its statements with a stand-in clock),
    so that a mistake in a default is reported once, as [common]'s.
    Returns the fields that passed, as written."""
    if not isinstance(row, dict):
        errors.append("%s: expected a table of fields, got %s"
                      % (where(COMMON, None), type_name(row)))
        return {}
    good = {}
    # The snippets first: the statements are checked with them pasted in.
    snippets = {}
    for field in SNIPPETS:
        if field in row:
            try:
                check_types(field, row[field])
                snippets[field] = check_field(field, row[field], COMMON, COMMON_NOW)
            except FieldError as e:
                snippets[field] = None
                errors.append("%s: %s" % (where(COMMON, field), e))
    for field, value in row.items():
        if field in SNIPPETS:
            if snippets[field] is not None:
                good[field] = value
            continue
        if field not in FIELDS:
            errors.append("%s: unknown field" % where(COMMON, field))
        elif field == "failures":
            try:
                check_types(field, value)
                good[field] = check_failures(value, errors, lambda f: where(COMMON, f))
            except FieldError as e:
                errors.append("%s: %s" % (where(COMMON, field), e))
        elif field in ROW_ONLY:
            errors.append("%s: not allowed in [common]: %s (give it in each row)"
                          % (where(COMMON, field), ROW_ONLY[field]))
        else:
            try:
                check_types(field, value)
                if field in STATEMENTS or field in FRAGMENTS:
                    check_spelling(field, value)
                check_field(field, value, COMMON, COMMON_NOW, snippets)
                good[field] = value
            except FieldError as e:
                errors.append("%s: %s" % (where(COMMON, field), e))
            except SaidAlready:
                pass
    return good


def check_row(key, row, common, common_fields, errors, where):
    """Validate one dialect row, with the fields it does not give taken
    from [common] (`common`: those of its fields that passed;
    `common_fields`: every field [common] gives, passed or not).  Returns
    the processed dialect or None."""
    if not ROW_KEY_RE.fullmatch(key):
        errors.append("%s: row key must match [a-z][a-z0-9_]*" % where(key, None))
        return None
    if not isinstance(row, dict):
        errors.append("%s: expected a table of fields, got %s" % (where(key, None), type_name(row)))
        return None
    ok = True
    for field in row:
        if field not in FIELDS:
            errors.append("%s: unknown field" % where(key, field))
            ok = False
    out = {"key": key}
    now_ms = None
    if "now_ms" in row:
        try:
            now_ms = out["now_ms"] = check_field("now_ms", row["now_ms"], key, None)
        except FieldError as e:
            errors.append("%s: %s" % (where(key, "now_ms"), e))
            ok = False
    returns = row.get("renew_each_returns", common.get("renew_each_returns"))
    # The row's snippets (its own, else [common]'s), filled in as they
    # are checked (they come before the statements in FIELDS); None for
    # one that failed, so that what uses it is not reported again.
    snippets = {}
    for field in FIELDS:
        if field == "renewed_each" and returns is not False:
            # Sent only after a renew_each that can only count.
            if field in row and returns is True:
                errors.append("%s: not used: renew_each_returns is true (renew_each says "
                              "which rows it renewed)" % where(key, field))
                ok = False
            out[field] = None
            continue
        if field == "failures":
            # Not inherited: the row's lists add to [common]'s.
            try:
                check_types(field, row.get(field, {}))
                n = len(errors)
                out[field] = check_failures(row.get(field, {}), errors,
                                            lambda f: where(key, f))
                ok = ok and len(errors) == n
            except FieldError as e:
                errors.append("%s: %s" % (where(key, field), e))
                ok = False
            continue
        if field in row:
            value, inherited = row[field], False
        elif field in ROW_ONLY:
            if field not in OPTIONAL_FIELDS:
                errors.append("%s: missing required field (a row's own: %s)"
                              % (where(key, field), ROW_ONLY[field]))
                ok = False
                continue
            value, inherited = OPTIONAL_FIELDS[field], False
        elif field in common:
            value, inherited = common[field], True
        elif field in common_fields:
            ok = False  # [common]'s value is wrong, and said so once
            if field in SNIPPETS:
                snippets[field] = None
            continue
        elif field in SNIPPETS:
            continue  # set nowhere: an error only where a statement uses it
        else:
            errors.append("%s: missing required field (not in the row, and [common] has no "
                          "default)" % where(key, field))
            ok = False
            continue
        if field == "now_ms":
            continue
        if now_ms is None and (field in STATEMENTS or field in FRAGMENTS
                               or field in EACH_STATEMENTS or field == "session_setup"):
            ok = False  # the clock is wrong or missing, and said so
            continue
        try:
            out[field] = check_field(field, value, key, now_ms, snippets)
            if field in SNIPPETS:
                snippets[field] = out[field]
        except FieldError as e:
            # An inherited value checked out in [common]: what fails now
            # is this row's clock or snippets pasted into it.
            errors.append("%s%s: %s" % (where(key, field),
                                        " (inherited from [common])" if inherited else "", e))
            ok = False
            if field in SNIPPETS:
                snippets[field] = None
        except SaidAlready:
            ok = False
    if ok:
        # A row whose `=` is not exact (it sets name_equals or
        # owner_equals) must compare the batched statements' row values
        # its way too: an inherited one gets the row's snippets for them.
        exact = [f for f in ("name_equals", "owner_equals") if f in row]
        for field, needs in EACH_SNIPPETS.items():
            missing = [f for f in needs if f not in row]
            if exact and missing and field not in row and out[field] is not None:
                errors.append("%s (inherited from [common]): the row sets %s but not %s, so "
                              "its row values would not compare as exact bytes"
                              % (where(key, field), " and ".join(exact), " and ".join(missing)))
                ok = False
        # The fire ledger compares a job as the lease statements compare a
        # name: a row whose `=` is not exact spells that for the job too.
        if exact and "job_equals" not in row:
            errors.append("%s: the row sets %s but not job_equals, so its fire statements would "
                          "not compare jobs as exact bytes"
                          % (where(key, "job_equals"), " and ".join(exact)))
            ok = False
        # The hand-over compares handoff_to as the owner is compared, and
        # ready_list a name's start as names are: a row whose `=` is not
        # exact spells those too.
        for snippet in ("no_handoff", "handoff_owner", "handoff_target", "name_prefix"):
            if exact and snippet not in row:
                errors.append("%s: the row sets %s but not %s, so its hand-over statements "
                              "would not compare as exact bytes"
                              % (where(key, snippet), " and ".join(exact), snippet))
                ok = False
        # renew_each_returns says how renew_each, take_each and
        # release_each answer (their rows, or their count): a row that
        # answers otherwise than [common] writes all three itself.
        if returns != common.get("renew_each_returns"):
            for field in ("renew_each", "take_each", "release_each"):
                if field not in row:
                    errors.append("%s (inherited from [common]): renew_each_returns is %s "
                                  "here and %s in [common]: the row must write its own"
                                  % (where(key, field), str(returns).lower(),
                                     str(common.get("renew_each_returns")).lower()))
                    ok = False
    if ok:
        # A full chunk of every batched statement must fit the dialect's
        # limit on bound parameters.
        for field in EACH_STATEMENTS:
            if out[field] is None:
                continue
            n = each_nparams(out[field], out["batch_max"])
            if n > out["max_params"]:
                errors.append("%s: %d leases make %s bind %d parameters; max_params is %d"
                              % (where(key, "batch_max"), out["batch_max"], field, n,
                                 out["max_params"]))
                ok = False
            elif n > BIND_MAX:
                errors.append("%s: %d leases make %s bind %d parameters; src/odbc.c binds at "
                              "most %d in one statement" % (where(key, "batch_max"),
                                                            out["batch_max"], field, n, BIND_MAX))
                ok = False
    return out if ok else None


def check_setting_value(text):
    """A driver setting's value: known placeholders, balanced literal
    braces, nothing that would end the connection-string attribute."""
    if ";" in text:
        raise FieldError("';' would end the connection-string attribute")
    i = 0
    depth = 0
    while i < len(text):
        if text.startswith("{{", i):
            depth += 1
            i += 2
        elif text.startswith("}}", i):
            depth -= 1
            if depth < 0:
                raise FieldError("'}}' without '{{'")
            i += 2
        elif text[i] == "{":
            m = PLACEHOLDER_RE.match(text, i)
            if not m:
                raise FieldError("unclosed '{' at offset %d" % i)
            if m.group(1) not in DRIVER_PLACEHOLDERS:
                raise FieldError("unknown placeholder '{%s}' (known: %s)"
                                 % (m.group(1), ", ".join("{%s}" % p for p in DRIVER_PLACEHOLDERS)))
            i = m.end()
        elif text[i] == "}":
            raise FieldError("lone '}' at offset %d (write '}}' for a brace)" % i)
        else:
            i += 1
    if depth != 0:
        raise FieldError("'{{' without '}}'")
    return text


def check_setting_table(label, what, settings, required):
    """A driver's table of connection-string settings: [(key, value)]."""
    if settings is None and not required:
        return []
    if not isinstance(settings, dict) or not settings:
        raise FieldError("%s: '%s' must be a non-empty table of strings" % (label, what))
    pairs = []
    for k, v in settings.items():
        if not SETTING_KEY_RE.fullmatch(k):
            raise FieldError("%s: setting '%s' is not a connection-string key" % (label, k))
        if not isinstance(v, str):
            raise FieldError("%s: setting '%s' must be a string, got %s"
                             % (label, k, type_name(v)))
        try:
            pairs.append((k, check_setting_value(v)))
        except FieldError as e:
            raise FieldError("%s: setting '%s': %s" % (label, k, e)) from None
    return pairs


DRIVER_KEYS = ("match", "settings", "must_exist", "database_file")


def check_drivers(value):
    """drivers = [ { match = [...], settings = { Key = "value", ... },
    must_exist = { Key = "value", ... }, database_file = "Key" }, ... ]
    (must_exist and database_file optional)"""
    res = []
    for idx, item in enumerate(value):
        label = "item %d" % (idx + 1)
        if not isinstance(item, dict):
            raise FieldError("%s: expected a table, got %s" % (label, type_name(item)))
        for k in item:
            if k not in DRIVER_KEYS:
                raise FieldError("%s: unknown key '%s' (known: %s)"
                                 % (label, k, ", ".join(DRIVER_KEYS)))
        match = item.get("match")
        if not isinstance(match, list) or not match:
            raise FieldError("%s: 'match' must be a non-empty list of strings" % label)
        for j, m in enumerate(match):
            if not isinstance(m, str) or not m.strip():
                raise FieldError("%s: 'match' item %d must be a non-empty string" % (label, j + 1))
        pairs = check_setting_table(label, "settings", item.get("settings"), True)
        must = check_setting_table(label, "must_exist", item.get("must_exist"), False)
        dbfile = item.get("database_file")
        if dbfile is not None and (not isinstance(dbfile, str)
                                   or not SETTING_KEY_RE.fullmatch(dbfile)):
            raise FieldError("%s: 'database_file' must name a connection-string key" % label)
        res.append({"match": list(match), "settings": pairs, "must_exist": must,
                    "database_file": dbfile})
    return res


def toml_error_location(lines, lineno):
    """Best-effort (row, field) for a tomllib error at 1-based lineno."""
    row = field = None
    header = re.compile(r"\s*\[\s*([^\]\s]+)\s*\]")
    keyline = re.compile(r"\s*([A-Za-z0-9_\-]+)\s*=")
    for idx in range(min(lineno, len(lines)) - 1, -1, -1):
        line = lines[idx]
        m = header.match(line)
        if m:
            row = m.group(1).strip("\"'")
            if idx == lineno - 1:
                field = None
            if "." in row:
                # [row.table]: the field is the sub-table's key.
                row, sub = row.split(".", 1)
                field = sub if field is None else "%s.%s" % (sub, field)
            break
        if field is None:
            m = keyline.match(line)
            if m:
                field = m.group(1)
    return row, field


def where_fn(path):
    def where(row, field):
        s = "%s: row '%s'" % (path, row)
        if field is not None:
            s += ", field '%s'" % field
        return s
    return where


def load(path):
    """Parse the TOML file; on error print a message and return None."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        print("%s: cannot read: %s" % (path, e.strerror), file=sys.stderr)
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        print("%s: not valid UTF-8 (byte %d)" % (path, e.start), file=sys.stderr)
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        m = re.search(r"at line (\d+)", msg)
        row = field = None
        if m:
            row, field = toml_error_location(text.splitlines(), int(m.group(1)))
        what = "TOML syntax error"
        if msg.startswith("Cannot declare") and "twice" in msg:
            what = "duplicate row" if field is None else "duplicate table"
        elif msg.startswith("Cannot overwrite"):
            what = "duplicate field" if field is not None else "duplicate key"
        prefix = path
        if row is not None:
            prefix = where_fn(path)(row, field)
        print("%s: %s: %s" % (prefix, what, msg), file=sys.stderr)
        return None


# ---------------------------------------------------------------- output

def c_string(s, indent):
    """A C string literal for s, split into chunks on several lines."""
    pieces = []
    cur = []
    width = 0
    prev = ""
    for ch in s:
        o = ord(ch)
        if ch == "\\":
            e = "\\\\"
        elif ch == '"':
            e = '\\"'
        elif ch == "\n":
            e = "\\n"
        elif ch == "\t":
            e = "\\t"
        elif ch == "?" and prev == "?":
            e = "\\?"  # never form a trigraph
        elif 0x20 <= o < 0x7F:
            e = ch
        else:
            e = "".join("\\%03o" % b for b in ch.encode("utf-8"))
        prev = ch
        cur.append(e)
        width += len(e)
        if width >= 64 and ch == " ":
            pieces.append("".join(cur))
            cur = []
            width = 0
    if cur or not pieces:
        pieces.append("".join(cur))
    return ("\n" + indent).join('"%s"' % p for p in pieces)


HEADER = """\
/* Generated by {gen} from {tmpl}.  Do not edit. */
#ifndef SQLEASE_DIALECTS_H
#define SQLEASE_DIALECTS_H

#include <stddef.h>

/* The bound parameters, as statements name them (:name, ...). */
typedef enum sqle_param {{
{param_enum}
}} sqle_param;

#define SQLEASE_PARAM_COUNT {param_count}

/* The C type of a parameter's value. */
enum {{
    SQLEASE_PARAM_TEXT = 1,  /* const char *, NULL for SQL NULL */
    SQLEASE_PARAM_INT64 = 2  /* int64_t */
}};

/* The binding table, one X(constant, "name", type, field) per parameter
 * in enum order: `field` is the member of db_params (src/db.h) its value
 * is bound from.  db.c expands it where db_params is known. */
#define SQLEASE_PARAM_LIST(X) \\
{param_list}

/* How a value is written as a string literal of the dialect, for a
 * predicate handed to a program that cannot bind parameters. */
typedef enum sqle_literal_style {{
    SQLEASE_LIT_STANDARD = 0,        /* '...', quote doubled */
    SQLEASE_LIT_POSTGRES_ESCAPE = 1, /* E'...', backslash and quote escaped */
    SQLEASE_LIT_MYSQL = 2            /* _utf8mb4'...', quote doubled; no backslash */
}} sqle_literal_style;

/* Connection-string settings that bound a driver's socket waits, added
 * when the user's connection string (or DSN) does not set the key.
 * match: case-insensitive substrings of the driver's file or registered
 * name; values may hold {{login_s}}, {{query_s}}, {{query_ms}},
 * {{query_half_ms}} (filled from the handle's timeouts) and doubled
 * braces for literal ones.  must_*: settings added the same way only to
 * a handle that must not create its database.  database_file: the key
 * that names the database file of an embedded database, or NULL. */
typedef struct sqle_driver {{
    const char *const *match;
    size_t nmatch;
    const char *const *keys;
    const char *const *values;
    size_t nsettings;
    const char *const *must_keys;
    const char *const *must_values;
    size_t nmust;
    const char *database_file;
}} sqle_driver;

/* sql: `?` markers, may still contain {{table}}, {{fire_table}} and
 * {{history_table}} (substituted at run time); params: one sqle_param
 * per `?`, in order. */
typedef struct sqle_stmt {{
    const char *sql;
    const unsigned char *params;
    size_t nparams;
}} sqle_stmt;

/* A batched statement (many leases, one statement): the text for n
 * leases is head.sql, then item.sql n times with sep between them, then
 * tail.sql; its markers are bound in that order, head.params first, then
 * item.params once per lease, then tail.params.  The tables may be in
 * the head or the tail.  head.sql NULL: the dialect does not have it. */
typedef struct sqle_each_stmt {{
    sqle_stmt head;
    sqle_stmt item;
    const char *sep;
    sqle_stmt tail;
}} sqle_each_stmt;

/* A list of strings. */
typedef struct sqle_strings {{
    const char *const *items;
    size_t n;
}} sqle_strings;

/* How the drivers of a dialect report a failure, for the classifier
 * (src/classify.c): SQLSTATEs (five characters, or two for a class) and
 * case-insensitive phrases of the driver's message.  A dialect's rules add
 * to sqle_common_failures. */
typedef struct sqle_failure_rules {{
{failure_fields}
}} sqle_failure_rules;

typedef struct sqle_dialect {{
    const char *key;
    const char *const *aliases; /* other names --dialect accepts */
    size_t naliases;
    const char *now_ms;
    const char *const *dbms_names;
    size_t ndbms_names;
    const char *const *session_setup;
    size_t nsession_setup;
    const sqle_driver *drivers;
    size_t ndrivers;
    sqle_stmt {stmts};
    /* Predicates for the caller's own statements (same shape). */
    sqle_stmt {frags};
    /* Batched statements; renewed_each only when !renew_each_returns. */
    sqle_each_stmt {eachs};
    int renew_each_returns; /* renew_each returns each renewed row */
    size_t batch_max;       /* leases one batched statement carries at most */
    size_t max_params;      /* bound parameters one statement may have */
    int string_literal; /* sqle_literal_style */
    sqle_failure_rules failures; /* its own; [common]'s apply too */
}} sqle_dialect;

/* The rules of [common]: they apply to every dialect, and alone while
 * the dialect is not known yet. */
extern const sqle_failure_rules sqle_common_failures;

/* Every dialect, sorted by key.  src/dialect.c finds one by key or
 * alias, or by the DBMS name a connection reports. */
extern const sqle_dialect sqle_dialects[];
extern const size_t sqle_dialect_count;
/* The keys, sorted, separated by ", " (for messages). */
extern const char sqle_dialect_key_list[];

#endif /* SQLEASE_DIALECTS_H */
"""

def render_h():
    enum = "\n".join("    %s = %d%s /* :%s, %s: %s */"
                     % (PARAMS[n][0], PARAMS[n][1], "," if i + 1 < len(PARAM_LIST) else "",
                        n, t, what)
                     for i, (n, t, _, what) in enumerate(PARAM_LIST))
    xs = " \\\n".join("    X(%s, \"%s\", %s, %s)" % (PARAMS[n][0], n, PARAM_TYPES[t], f)
                       for n, t, f, _ in PARAM_LIST)
    return HEADER.format(gen=GENERATOR_NAME, tmpl=TEMPLATE_NAME,
                         stmts=", ".join(STATEMENTS), frags=", ".join(FRAGMENTS),
                         eachs=", ".join(EACH_STATEMENTS),
                         param_enum=enum, param_count=len(PARAM_LIST), param_list=xs,
                         failure_fields="\n".join("    sqle_strings %s;" % name
                                                  for name, _ in FAILURE_FIELDS))


def render_c(dialects, common_failures, h_name):
    lines = []
    w = lines.append
    w("/* Generated by %s from %s.  Do not edit. */" % (GENERATOR_NAME, TEMPLATE_NAME))
    w('#include "%s"' % h_name)
    w("")
    w("#include <stddef.h>")
    w("")

    def str_array(name, items):
        if not items:
            return "NULL, 0"
        w("static const char *const %s[] = {" % name)
        for s in items:
            w("    %s," % c_string(s, "    "))
        w("};")
        return "%s, %d" % (name, len(items))

    def failure_rules(prefix, rules, indent):
        parts = []
        for name, _ in FAILURE_FIELDS:
            ref = str_array("%s_%s" % (prefix, name), rules[name])
            parts.append("{ %s }" % ref)
        return "{\n%s%s\n%s}" % (indent + "    ", (",\n" + indent + "    ").join(parts),
                                  indent)

    w("/* ---- [common] ---- */")
    w("")
    rules = failure_rules("common", common_failures, "")
    w("")
    w("const sqle_failure_rules sqle_common_failures = %s;" % rules)
    w("")

    bodies = []
    for d in dialects:
        k = d["key"]
        w("/* ---- %s ---- */" % k)
        w("")
        refs = {}
        refs["aliases"] = str_array("%s_aliases" % k, d["aliases"])
        refs["dbms_names"] = str_array("%s_dbms_names" % k, d["dbms_names"])
        refs["session_setup"] = str_array("%s_session_setup" % k, d["session_setup"])
        refs["failures"] = failure_rules(k, d["failures"], "        ")
        drv = []
        for idx, dr in enumerate(d["drivers"]):
            m = str_array("%s_driver%d_match" % (k, idx), dr["match"]).split(",")[0]
            ks = str_array("%s_driver%d_keys" % (k, idx), [a for a, _ in dr["settings"]])
            vs = str_array("%s_driver%d_values" % (k, idx), [b for _, b in dr["settings"]])
            if dr["must_exist"]:
                mk = str_array("%s_driver%d_must_keys" % (k, idx),
                               [a for a, _ in dr["must_exist"]]).split(",")[0]
                mv = str_array("%s_driver%d_must_values" % (k, idx),
                               [b for _, b in dr["must_exist"]]).split(",")[0]
            else:
                mk = mv = "NULL"
            dbf = c_string(dr["database_file"], "      ") if dr["database_file"] else "NULL"
            drv.append("    { %s, %d, %s, %s, %d, %s, %s, %d, %s }"
                       % (m, len(dr["match"]), ks.split(",")[0], vs.split(",")[0],
                          len(dr["settings"]), mk, mv, len(dr["must_exist"]), dbf))
        if drv:
            w("static const sqle_driver %s_drivers[] = {" % k)
            w(",\n".join(drv))
            w("};")
            refs["drivers"] = "%s_drivers, %d" % (k, len(drv))
        else:
            refs["drivers"] = "NULL, 0"
        for field in list(STATEMENTS) + list(FRAGMENTS):
            sql, params = d[field]
            if params:
                name = "%s_%s_params" % (k, field)
                w("static const unsigned char %s[] = {" % name)
                w("    " + ", ".join(PARAMS[p][0] for p in params))
                w("};")
                refs[field] = (sql, "%s, %d" % (name, len(params)))
            else:
                refs[field] = (sql, "NULL, 0")
        for field in EACH_STATEMENTS:
            st = d[field]
            if st is None:
                refs[field] = None
                continue
            parts = []
            for part in ("head", "item", "tail"):
                sql, params = st[part]
                if params:
                    name = "%s_%s_%s_params" % (k, field, part)
                    w("static const unsigned char %s[] = {" % name)
                    w("    " + ", ".join(PARAMS[p][0] for p in params))
                    w("};")
                    parts.append((sql, "%s, %d" % (name, len(params))))
                else:
                    parts.append((sql, "NULL, 0"))
            refs[field] = (parts, st["sep"])
        w("")
        b = []
        b.append("    {")
        b.append("        %s," % c_string(k, "        "))
        b.append("        %s," % refs["aliases"])
        b.append("        %s," % c_string(d["now_ms"], "        "))
        b.append("        %s," % refs["dbms_names"])
        b.append("        %s," % refs["session_setup"])
        b.append("        %s," % refs["drivers"])
        for field in list(STATEMENTS) + list(FRAGMENTS):
            sql, pref = refs[field]
            b.append("        /* %s */" % field)
            b.append("        { %s,\n          %s }," % (c_string(sql, "          "), pref))
        for field in EACH_STATEMENTS:
            b.append("        /* %s */" % field)
            if refs[field] is None:
                b.append("        { { NULL, NULL, 0 }, { NULL, NULL, 0 }, NULL, "
                         "{ NULL, NULL, 0 } },")
                continue
            parts, sep = refs[field]
            (hs, hp), (is_, ip), (ts, tp) = parts
            b.append("        { { %s,\n            %s },\n          { %s,\n            %s },\n"
                     "          %s,\n          { %s,\n            %s } },"
                     % (c_string(hs, "            "), hp, c_string(is_, "            "), ip,
                        c_string(sep, "          "), c_string(ts, "            "), tp))
        b.append("        %d, /* renew_each_returns */" % (1 if d["renew_each_returns"] else 0))
        b.append("        %d, /* batch_max */" % d["batch_max"])
        b.append("        %d, /* max_params */" % d["max_params"])
        b.append("        %s," % LITERAL_STYLES[d["string_literal"]])
        b.append("        /* failures */")
        b.append("        %s" % refs["failures"])
        b.append("    }")
        bodies.append("\n".join(b))

    w("const sqle_dialect sqle_dialects[] = {")
    w(",\n".join(bodies))
    w("};")
    w("")
    w("const size_t sqle_dialect_count = sizeof sqle_dialects / sizeof sqle_dialects[0];")
    w("")
    keys = ", ".join(d["key"] for d in dialects)
    w("const char sqle_dialect_key_list[] = %s;" % c_string(keys, "    "))
    return "\n".join(lines) + "\n"


def write_file(path, text):
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    if len(argv) != 4:
        print("usage: gen_dialects.py TEMPLATE.toml OUT.c OUT.h", file=sys.stderr)
        return 2
    path, out_c, out_h = argv[1:]
    data = load(path)
    if data is None:
        return 1
    where = where_fn(path)
    errors = []
    dialects = []
    common_row = data.get(COMMON, {})
    common = check_common(common_row, errors, where)
    common_failures = common.pop("failures", check_failures({}, errors, None))
    common_fields = set(common_row) if isinstance(common_row, dict) else set()
    for key, row in data.items():
        if key == COMMON:
            continue
        d = check_row(key, row, common, common_fields, errors, where)
        if d is not None:
            dialects.append(d)
    if not [k for k in data if k != COMMON]:
        errors.append("%s: no dialect rows" % path)
    # A name --dialect accepts must pick one row.
    taken = {d["key"]: d["key"] for d in dialects}
    for d in dialects:
        for alias in d["aliases"]:
            if alias in taken:
                errors.append("%s: '%s' already names row '%s'"
                              % (where(d["key"], "aliases"), alias, taken[alias]))
            else:
                taken[alias] = d["key"]
    if errors:
        for e in errors:
            print(e, file=sys.stderr)
        return 1
    dialects.sort(key=lambda d: d["key"])
    write_file(out_h, render_h())
    write_file(out_c, render_c(dialects, common_failures, os.path.basename(out_h)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
