/*
 * util.c -- the small helpers every library file shares: filling an
 * sqlease_error, status descriptions, redacting passwords out of
 * connection strings and messages, identifier checks, SQL templating and
 * the default log sink.
 *
 * Everything here writes into fixed-size buffers by truncation, never past
 * them, and never lets a password through: a message is redacted after it
 * is formatted and before it reaches the caller or a log sink.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Scratch size for formatting before truncating into the caller's buffer:
 * large enough that a driver message is redacted whole, not cut first. */
#define SCRATCH 2048

const char *sqlease_version(void)
{
    return SQLEASE_VERSION;
}

/*
 * The switches below name every enumerator and have no default: a status
 * or stop reason added to the header without a text here fails the build
 * under -Wswitch (in -Wall).  Numbers outside the enum fall through to
 * the answer after the switch.
 */
const char *sqlease_strerror(int status)
{
    switch ((sqlease_status)status) {
    case SQLEASE_OK: return "success";
    case SQLEASE_NOT_HELD: return "the lease is held by another owner";
    case SQLEASE_EINVAL: return "invalid argument";
    case SQLEASE_ENOMEM: return "out of memory";
    case SQLEASE_ECONNECT: return "cannot reach the database (connection failed or broke)";
    case SQLEASE_ETIMEOUT: return "the database did not answer in time (timeout)";
    case SQLEASE_EDB: return "the database rejected a statement";
    case SQLEASE_ENOTABLE: return "the lease table does not exist (run `sqlease migrate`)";
    case SQLEASE_ENOROW: return "the lease row does not exist (run `sqlease migrate`)";
    case SQLEASE_ECLOCK: return "the database clock read as NULL, zero or negative";
    case SQLEASE_EDIALECT: return "unsupported database or unknown dialect";
    case SQLEASE_ESTATE: return "the call does not fit the handle's state";
    case SQLEASE_EPLATFORM: return "an operating-system call failed";
    case SQLEASE_EROWCOUNT: return "unexpected row count: whether the lease is held is unknown";
    case SQLEASE_CLAIMED: return "the fire was claimed already";
    case SQLEASE_NOT_DUE: return "the fire is not due yet by the database clock";
    case SQLEASE_NO_FOLLOWER: return "no ready follower to hand the lease over to";
    case SQLEASE_PENDING: return "a hand-over of the lease is pending already";
    }
    return "unknown status";
}

const char *sqlease_status_name(int status)
{
    switch ((sqlease_status)status) {
    case SQLEASE_OK: return "SQLEASE_OK";
    case SQLEASE_NOT_HELD: return "SQLEASE_NOT_HELD";
    case SQLEASE_EINVAL: return "SQLEASE_EINVAL";
    case SQLEASE_ENOMEM: return "SQLEASE_ENOMEM";
    case SQLEASE_ECONNECT: return "SQLEASE_ECONNECT";
    case SQLEASE_ETIMEOUT: return "SQLEASE_ETIMEOUT";
    case SQLEASE_EDB: return "SQLEASE_EDB";
    case SQLEASE_ENOTABLE: return "SQLEASE_ENOTABLE";
    case SQLEASE_ENOROW: return "SQLEASE_ENOROW";
    case SQLEASE_ECLOCK: return "SQLEASE_ECLOCK";
    case SQLEASE_EDIALECT: return "SQLEASE_EDIALECT";
    case SQLEASE_ESTATE: return "SQLEASE_ESTATE";
    case SQLEASE_EPLATFORM: return "SQLEASE_EPLATFORM";
    case SQLEASE_EROWCOUNT: return "SQLEASE_EROWCOUNT";
    case SQLEASE_CLAIMED: return "SQLEASE_CLAIMED";
    case SQLEASE_NOT_DUE: return "SQLEASE_NOT_DUE";
    case SQLEASE_NO_FOLLOWER: return "SQLEASE_NO_FOLLOWER";
    case SQLEASE_PENDING: return "SQLEASE_PENDING";
    }
    return "unknown";
}

const char *sqlease_stop_reason_str(int reason)
{
    switch ((sqlease_stop_reason)reason) {
    case SQLEASE_STOP_LOST:
        return "the hold is gone (another owner holds the lease, or it expired or was cleared)";
    case SQLEASE_STOP_DEADLINE:
        return "the lease was not proven for the renew deadline";
    case SQLEASE_STOP_SHUTDOWN:
        return "shutting down";
    case SQLEASE_STOP_HANDOFF:
        return "the lease is being handed over to another instance";
    }
    return "unknown stop reason";
}

const char *sqlease_stop_reason_name(int reason)
{
    switch ((sqlease_stop_reason)reason) {
    case SQLEASE_STOP_LOST: return "lost";
    case SQLEASE_STOP_DEADLINE: return "deadline";
    case SQLEASE_STOP_SHUTDOWN: return "shutdown";
    case SQLEASE_STOP_HANDOFF: return "handoff";
    }
    return "unknown";
}

/* Turn a formatted message into one line: control characters (a driver's
 * multi-line message) become spaces, and trailing blanks go. */
static void one_line(char *s)
{
    size_t n;
    char *p;
    for (p = s; *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    }
    n = strlen(s);
    while (n > 0 && s[n - 1] == ' ')
        s[--n] = '\0';
}

/* Copy src into dst of capacity cap (cap > 0), truncating. */
static void copy_trunc(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The common body of sqle_err and sqle_fail: format into scratch
 * space, redact, flatten to one line, then truncate into err.  Every
 * input is read before err is written, so a caller may rewrap an error
 * in place (passing err->sqlstate, or err->message as an argument). */
static int err_fill(sqlease_error *err, int status, const char *sqlstate, long native,
                    const char *fmt, va_list ap)
{
    char buf[SCRATCH];
    char state[sizeof err->sqlstate];

    if (err == NULL)
        return status;
    state[0] = '\0';
    if (sqlstate != NULL)
        copy_trunc(state, sizeof state, sqlstate);
    buf[0] = '\0';
    if (fmt != NULL && vsnprintf(buf, sizeof buf, fmt, ap) < 0)
        copy_trunc(buf, sizeof buf, "(message could not be formatted)");
    sqle_redact_inplace(buf);
    one_line(buf);
    err->status = status;
    err->native_error = native;
    memcpy(err->sqlstate, state, sizeof state);
    copy_trunc(err->message, sizeof err->message, buf);
    return status;
}

int sqle_err(sqlease_error *err, int status, const char *sqlstate, long native,
             const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = err_fill(err, status, sqlstate, native, fmt, ap);
    va_end(ap);
    return rc;
}

int sqle_fail(sqlease_error *err, int status, const char *fmt, ...)
{
    va_list ap;
    int rc;
    va_start(ap, fmt);
    rc = err_fill(err, status, NULL, 0, fmt, ap);
    va_end(ap);
    return rc;
}

void sqle_err_clear(sqlease_error *err)
{
    if (err == NULL)
        return;
    err->status = SQLEASE_OK;
    err->sqlstate[0] = '\0';
    err->native_error = 0;
    err->message[0] = '\0';
}

uint64_t sqle_hash_text(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

char *sqle_strdup(const char *s)
{
    size_t n;
    char *p;
    if (s == NULL)
        return NULL;
    n = strlen(s) + 1;
    p = malloc(n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

/* ------------------------------------------------------------------ */
/* Redaction                                                           */
/* ------------------------------------------------------------------ */

/* Case-insensitive substring test over a key of length n. */
static int key_contains(const char *key, size_t n, const char *word)
{
    size_t w = strlen(word);
    size_t i, j;
    if (w > n)
        return 0;
    for (i = 0; i + w <= n; i++) {
        for (j = 0; j < w; j++) {
            if (tolower((unsigned char)key[i + j]) != word[j])
                break;
        }
        if (j == w)
            return 1;
    }
    return 0;
}

/* Whether a connection-string key names a secret.  Kept to the keys that
 * are secrets in the drivers we know of -- PWD and keys ending in it
 * (ENCRYPT_PWD, PRIV_KEY_FILE_PWD, NEWPWD), Password, Passwd, passphrases
 * and keys like "AuthPassword" or "ClientSecret" -- so that the rest of a
 * string stays readable for whoever debugs a connection.  Blanks around
 * the key (a tab before '=') are not part of it. */
static int secret_key(const char *key, size_t n)
{
    while (n > 0 && isspace((unsigned char)key[0])) {
        key++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)key[n - 1]))
        n--;
    if (n >= 3 && key_contains(key + n - 3, 3, "pwd"))
        return 1;
    return key_contains(key, n, "passwd") || key_contains(key, n, "password") ||
           key_contains(key, n, "passphrase") || key_contains(key, n, "secret");
}

/*
 * How a driver may read a connection string.  ODBC's rule is that a
 * {braced} value runs to its closing brace, "}}" inside being one brace;
 * some drivers end it at the first '}'; some take '...' and "..." as
 * quotes that may hold a ';'.  Readers that differ can see different
 * pairs in the same string (what one reads as part of a braced value
 * another reads as a PWD= of its own), so redaction hides what any of
 * them would take for a secret.
 */
enum {
    READ_FIRST_BRACE = 1, /* a brace ends at the first '}' */
    READ_QUOTES = 2,      /* '...' and "..." are quotes */
    READ_COUNT = 4        /* every combination of the two */
};

/* Length of the value at v (leading blanks excluded) as reader `how`
 * reads it: a braced or quoted part, then anything up to the ';' (a
 * driver may read what follows the closing brace as more of the value;
 * over-redacting a malformed string costs nothing). */
static size_t value_len(const char *v, int how)
{
    size_t i = 0;

    if (v[0] == '{') {
        for (i = 1; v[i] != '\0'; i++) {
            if (v[i] == '}') {
                if (!(how & READ_FIRST_BRACE) && v[i + 1] == '}') {
                    i++;
                    continue;
                }
                i++;
                break;
            }
        }
    } else if ((how & READ_QUOTES) && (v[0] == '\'' || v[0] == '"')) {
        for (i = 1; v[i] != '\0' && v[i] != v[0]; i++)
            ;
        if (v[i] == v[0])
            i++;
    }
    while (v[i] != '\0' && v[i] != ';')
        i++;
    return i;
}

/* A byte range of the input; sqle_redact replaces each by "***". */
typedef struct span {
    size_t from, to;
} span;

/*
 * Record the value of every secret key of conn as reader `how` reads it:
 * from just after the '=' to the end of the value.  An empty value is a
 * span too (PWD= becomes PWD=***: the reader is not told there was
 * none).  Returns the new count; spans has room for at most max.
 */
static size_t secret_spans(const char *conn, int how, span *spans, size_t count, size_t max)
{
    const char *p = conn;

    while (*p != '\0') {
        const char *k = p, *eq, *v;
        size_t vlen;

        while (*k == ';')
            k++;
        eq = k;
        while (*eq != '\0' && *eq != '=' && *eq != ';')
            eq++;
        if (*eq != '=') {
            /* A segment without '=': on to the next pair. */
            p = *eq == ';' ? eq + 1 : eq;
            continue;
        }
        v = eq + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        vlen = value_len(v, how);
        if (secret_key(k, (size_t)(eq - k)) && count < max) {
            spans[count].from = (size_t)(eq + 1 - conn);
            spans[count].to = (size_t)(v + vlen - conn);
            count++;
        }
        p = v + vlen;
        if (*p == ';')
            p++;
    }
    return count;
}

static int span_cmp(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->from < y->from ? -1 : x->from > y->from;
}

/*
 * A connection string is a sequence of KEY=value pairs separated by ';',
 * a value possibly {braced; with semicolons}.  Every secret value that
 * any of the readers above finds is replaced by "***", braces and quotes
 * included; where their spans overlap, the union goes.  A DSN name (no
 * '=') has nothing to redact.
 */
char *sqle_redact(const char *conn)
{
    size_t n, max, count = 0, i, o = 0, pos = 0;
    span *spans;
    char *out;
    int how;

    if (conn == NULL)
        return NULL;
    n = strlen(conn);
    /* A pair needs its '=': at most n + 1 pairs per reader. */
    max = READ_COUNT * (n + 1);
    spans = malloc(max * sizeof *spans);
    /* Each span, even an empty one, becomes three bytes. */
    out = malloc(n + 3 * max + 1);
    if (spans == NULL || out == NULL) {
        free(spans);
        free(out);
        return NULL;
    }
    for (how = 0; how < READ_COUNT; how++)
        count = secret_spans(conn, how, spans, count, max);
    qsort(spans, count, sizeof *spans, span_cmp);
    for (i = 0; i < count;) {
        size_t from = spans[i].from, to = spans[i].to;
        for (i++; i < count && spans[i].from <= to; i++)
            if (spans[i].to > to)
                to = spans[i].to;
        if (from < pos)
            from = pos;
        memcpy(out + o, conn + pos, from - pos);
        o += from - pos;
        memcpy(out + o, "***", 3);
        o += 3;
        if (to > pos)
            pos = to;
    }
    memcpy(out + o, conn + pos, n - pos);
    o += n - pos;
    out[o] = '\0';
    free(spans);
    return out;
}

static int key_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* Whether the quote at q closes a quoted stretch of free text rather
 * than being a character of a password: it is followed by the end, a
 * blank or punctuation ("connect to 'DSN=x;PWD=***' failed"). */
static int closing_quote(const char *q)
{
    return q[1] == '\0' || strchr(" \t\r\n),.:]", q[1]) != NULL;
}

/* Length of a plain value at v in free text: to the next ';', line end
 * or quote that closes the text around it, trailing blanks dropped. */
static size_t plain_len(const char *v)
{
    size_t n = 0;

    while (v[n] != '\0' && strchr(";\r\n", v[n]) == NULL &&
           !((v[n] == '\'' || v[n] == '"') && closing_quote(v + n)))
        n++;
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    return n;
}

/* Length of a {braced} value at v: to its closing brace ("}}" is one
 * brace inside), or to the end when it has none. */
static size_t brace_len(const char *v)
{
    size_t i;

    for (i = 1; v[i] != '\0'; i++) {
        if (v[i] == '}') {
            if (v[i + 1] == '}') {
                i++;
                continue;
            }
            return i + 1;
        }
    }
    return i;
}

/*
 * Redact `key=value` wherever it occurs in free text (a driver message
 * that quotes the connection string, a log line).  The key is the run of
 * letters, digits and '_' before the '=' (blanks between them allowed,
 * "PWD\t= x").  The value is braced as in a connection string, or quoted
 * to its closing quote and on to the next ';' (a driver that does not
 * take quotes as quoting reads that far), or runs to the next ';', line
 * end, or a quote that closes the text around it: spaces, and quotes
 * followed by more of the value, are taken as part of it, so an
 * over-long guess hides a little too much text rather than part of a
 * password.  The message never grows: a value of three bytes or more
 * becomes "***", a shorter one "*".
 */
void sqle_redact_inplace(char *msg)
{
    char *p;

    if (msg == NULL)
        return;
    for (p = msg; (p = strchr(p, '=')) != NULL;) {
        char *kend = p;
        char *k;
        char *v;
        size_t vlen;

        while (kend > msg && isspace((unsigned char)kend[-1]))
            kend--;
        k = kend;
        while (k > msg && key_char(k[-1]))
            k--;
        if (k == kend || !secret_key(k, (size_t)(kend - k))) {
            p++;
            continue;
        }
        v = p + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        if (*v == '{') {
            /* A driver may read what follows the closing brace as more
             * of the value: take it too, up to a separator. */
            vlen = brace_len(v);
            while (v[vlen] != '\0' && strchr(";'\" \t\r\n", v[vlen]) == NULL)
                vlen++;
        } else if (*v == '\'' || *v == '"') {
            /* Quoted, then up to a separator; or, as a driver that does
             * not take quotes as quoting reads it, a plain value that
             * starts with a quote: whichever is longer. */
            const char *close = strchr(v + 1, *v);
            size_t plain = 1 + plain_len(v + 1);
            vlen = close != NULL ? (size_t)(close - v) + 1 : strlen(v);
            while (v[vlen] != '\0' && strchr(";'\" \t\r\n", v[vlen]) == NULL)
                vlen++;
            if (plain > vlen)
                vlen = plain;
        } else {
            vlen = plain_len(v);
        }
        if (vlen == 0 || (vlen == 3 && memcmp(v, "***", 3) == 0)) {
            p = v + vlen;
            continue;
        }
        {
            size_t rlen = vlen >= 3 ? 3 : 1;
            memcpy(v, "***", rlen);
            memmove(v + rlen, v + vlen, strlen(v + vlen) + 1);
            p = v + rlen;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Identifiers and SQL templates                                       */
/* ------------------------------------------------------------------ */

/*
 * Words that some supported dialect reserves: SQL-92's reserved words and
 * those of PostgreSQL, MySQL/MariaDB, SQLite and T-SQL, lower case, in
 * strcmp order for bsearch.  A table name is pasted into SQL unquoted, so
 * one of these as a part of it fails at migrate, or worse, parses as
 * something else; a name must work in every dialect, because the same
 * options may be pointed at another database.  Non-reserved keywords
 * (usable as identifiers everywhere) are not here.
 */
static const char *const reserved_words[] = {
    "absolute", "accessible", "action", "add", "all", "allocate", "alter", "analyse", "analyze",
    "and", "any", "are", "array", "as", "asc", "asensitive", "assertion", "asymmetric", "at",
    "authorization", "autoincrement", "avg", "backup", "before", "begin", "between", "bigint",
    "binary", "bit", "bit_length", "blob", "both", "break", "browse", "bulk", "by", "call",
    "cascade", "cascaded", "case", "cast", "catalog", "change", "char", "char_length",
    "character", "character_length", "check", "checkpoint", "close", "clustered", "coalesce",
    "collate", "collation", "column", "commit", "compute", "concurrently", "condition",
    "connect", "connection", "constraint", "constraints", "contains", "containstable",
    "continue", "convert", "corresponding", "count", "create", "cross", "cube", "cume_dist",
    "current", "current_catalog", "current_date", "current_role", "current_schema",
    "current_time", "current_timestamp", "current_user", "cursor", "database", "databases",
    "date", "day", "day_hour", "day_microsecond", "day_minute", "day_second", "dbcc",
    "deallocate", "dec", "decimal", "declare", "default", "deferrable", "deferred", "delayed",
    "delete", "delete_domain_id", "dense_rank", "deny", "desc", "describe", "descriptor",
    "deterministic", "diagnostics", "disconnect", "disk", "distinct", "distinctrow",
    "distributed", "div", "do", "do_domain_ids", "domain", "double", "drop", "dual", "dump",
    "each", "else", "elseif", "empty", "enclosed", "end", "errlvl", "escape", "escaped",
    "except", "exception", "exec", "execute", "exists", "exit", "explain", "external",
    "extract", "false", "fetch", "file", "fillfactor", "first", "first_value", "float",
    "float4", "float8", "for", "force", "foreign", "found", "freetext", "freetexttable",
    "freeze", "from", "full", "fulltext", "function", "general", "generated", "get", "glob",
    "global", "go", "goto", "grant", "group", "grouping", "groups", "having", "high_priority",
    "holdlock", "hour", "hour_microsecond", "hour_minute", "hour_second", "identity",
    "identity_insert", "identitycol", "if", "ignore", "ignore_domain_ids", "ignore_server_ids",
    "ilike", "immediate", "in", "index", "indexed", "indicator", "infile", "initially", "inner",
    "inout", "input", "insensitive", "insert", "int", "int1", "int2", "int3", "int4", "int8",
    "integer", "intersect", "interval", "into", "io_after_gtids", "io_before_gtids", "is",
    "isnull", "isolation", "iterate", "join", "json_table", "key", "keys", "kill", "lag",
    "language", "last", "last_value", "lateral", "lead", "leading", "leave", "left", "level",
    "like", "limit", "linear", "lineno", "lines", "load", "local", "localtime",
    "localtimestamp", "lock", "long", "longblob", "longtext", "loop", "low_priority", "lower",
    "master_bind", "master_heartbeat_period", "master_ssl_verify_server_cert", "match", "max",
    "maxvalue", "mediumblob", "mediumint", "mediumtext", "merge", "middleint", "min", "minute",
    "minute_microsecond", "minute_second", "mod", "modifies", "module", "month", "names",
    "national", "natural", "nchar", "next", "no", "no_write_to_binlog", "nocheck",
    "nonclustered", "not", "nothing", "notnull", "nth_value", "ntile", "null", "nullif",
    "numeric", "octet_length", "of", "off", "offset", "offsets", "on", "only", "open",
    "opendatasource", "openquery", "openrowset", "openxml", "optimize", "optimizer_costs",
    "option", "optionally", "or", "order", "out", "outer", "outfile", "output", "over",
    "overlaps", "pad", "page_checksum", "parse_vcol_expr", "partial", "partition", "percent",
    "percent_rank", "pivot", "placing", "plan", "position", "precision", "prepare", "preserve",
    "primary", "print", "prior", "privileges", "proc", "procedure", "public", "purge",
    "raiserror", "range", "rank", "read", "read_write", "reads", "readtext", "real",
    "reconfigure", "recursive", "ref_system_id", "references", "regexp", "relative", "release",
    "rename", "repeat", "replace", "replication", "require", "resignal", "restore", "restrict",
    "return", "returning", "revert", "revoke", "right", "rlike", "rollback", "row",
    "row_number", "rowcount", "rowguidcol", "rows", "rule", "save", "schema", "schemas",
    "scroll", "second", "second_microsecond", "section", "securityaudit", "select",
    "semantickeyphrasetable", "semanticsimilaritydetailstable", "semanticsimilaritytable",
    "sensitive", "separator", "session", "session_user", "set", "setuser", "show", "shutdown",
    "signal", "similar", "size", "slow", "smallint", "some", "space", "spatial", "specific",
    "sql", "sql_big_result", "sql_calc_found_rows", "sql_small_result", "sqlcode", "sqlerror",
    "sqlexception", "sqlstate", "sqlwarning", "ssl", "starting", "statistics",
    "stats_auto_recalc", "stats_persistent", "stats_sample_pages", "stored", "straight_join",
    "substring", "sum", "symmetric", "system", "system_user", "table", "tablesample",
    "temporary", "terminated", "textsize", "then", "time", "timestamp", "timezone_hour",
    "timezone_minute", "tinyblob", "tinyint", "tinytext", "to", "top", "trailing", "tran",
    "transaction", "translate", "translation", "trigger", "trim", "true", "truncate",
    "try_convert", "tsequal", "undo", "union", "unique", "unknown", "unlock", "unpivot",
    "unsigned", "update", "updatetext", "upper", "usage", "use", "user", "using", "utc_date",
    "utc_time", "utc_timestamp", "value", "values", "varbinary", "varchar", "varcharacter",
    "variadic", "varying", "verbose", "view", "virtual", "waitfor", "when", "whenever", "where",
    "while", "window", "with", "within", "work", "write", "writetext", "xor", "year",
    "year_month", "zerofill", "zone"
};

/* strncasecmp for ASCII, whatever the locale (and on every platform). */
static int strncasecmp_ascii(const char *a, const char *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        int d = tolower((unsigned char)a[i]) - tolower((unsigned char)b[i]);
        if (d != 0 || a[i] == '\0')
            return d;
    }
    return 0;
}

static int cmp_word(const void *key, const void *elem)
{
    return strcmp((const char *)key, *(const char *const *)elem);
}

int sqle_reserved_word(const char *w, size_t n)
{
    char low[SQLEASE_MAX_TABLE + 1];
    size_t i;

    if (w == NULL || n == 0 || n > SQLEASE_MAX_TABLE)
        return 0;
    for (i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)w[i]);
    low[n] = '\0';
    return bsearch(low, reserved_words, sizeof reserved_words / sizeof reserved_words[0],
                   sizeof reserved_words[0], cmp_word) != NULL;
}

/* Whether t has the shape of one or two plain identifiers (reserved words
 * aside). */
static int table_shape_ok(const char *t)
{
    size_t n, i;
    int parts = 1;
    int at_start = 1;

    if (t == NULL)
        return 0;
    n = strlen(t);
    if (n == 0 || n > SQLEASE_MAX_TABLE)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c == '.') {
            if (at_start || ++parts > 2)
                return 0;
            at_start = 1;
            continue;
        }
        if (at_start) {
            if (!(isalpha(c) || c == '_') || c > 0x7f)
                return 0;
            at_start = 0;
        } else if (!(isalnum(c) || c == '_') || c > 0x7f) {
            return 0;
        }
    }
    return !at_start;
}

/* The first part of a well-shaped t that is a reserved word: its start
 * and length, or NULL.  One exception: the schema "public", PostgreSQL's
 * default schema, where the word is not reserved (in T-SQL, where it is,
 * no schema can be called that unquoted, so the name fails there as a
 * missing schema either way). */
static const char *reserved_part(const char *t, size_t *len)
{
    const char *p = t;

    for (;;) {
        size_t n = strcspn(p, ".");
        int schema = p[n] == '.';
        if (sqle_reserved_word(p, n) &&
            !(schema && n == 6 && strncasecmp_ascii(p, "public", 6) == 0)) {
            *len = n;
            return p;
        }
        if (p[n] == '\0')
            return NULL;
        p += n + 1;
    }
}

/* The first part of a well-shaped t that starts with "sqlite_" (in any
 * case), or NULL.  SQLite keeps every such name for its own tables: a
 * CREATE TABLE of one fails with "object name reserved for internal use",
 * and an existing one (sqlite_sequence) is SQLite's, never a lease table. */
static const char *sqlite_part(const char *t, size_t *len)
{
    const char *p = t;

    for (;;) {
        size_t n = strcspn(p, ".");
        if (n >= 7 && strncasecmp_ascii(p, "sqlite_", 7) == 0) {
            *len = n;
            return p;
        }
        if (p[n] == '\0')
            return NULL;
        p += n + 1;
    }
}

/* A table name is pasted into SQL (it cannot be bound), so it is limited
 * to what needs no quoting in any dialect: one or two plain identifiers,
 * neither of them a reserved word, nor a name SQLite keeps for itself
 * (the same options may be pointed at another database). */
int sqle_valid_table(const char *t)
{
    size_t n;

    return table_shape_ok(t) && reserved_part(t, &n) == NULL && sqlite_part(t, &n) == NULL;
}

int sqle_check_table(const char *what, const char *t, sqlease_error *err)
{
    const char *w;
    size_t n;

    if (!table_shape_ok(t))
        return sqle_fail(err, SQLEASE_EINVAL,
                         "invalid %s '%.*s': use an identifier or schema.identifier of "
                         "letters, digits and '_' (at most %d bytes)", what,
                         SQLEASE_MAX_TABLE, t != NULL ? t : "(null)", SQLEASE_MAX_TABLE);
    w = reserved_part(t, &n);
    if (w != NULL)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "invalid %s '%s': '%.*s' is a reserved word in SQL (in at least "
                         "one supported dialect); choose another name", what, t, (int)n, w);
    w = sqlite_part(t, &n);
    if (w != NULL)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "invalid %s '%s': SQLite keeps names starting with 'sqlite_' "
                         "('%.*s') for its own tables; choose another name", what, t, (int)n,
                         w);
    return SQLEASE_OK;
}

/*
 * Decode one UTF-8 sequence at s (n bytes left): its code point and
 * length, or 0 if it is malformed (overlong, a surrogate, past U+10FFFF,
 * truncated).  Databases refuse such bytes in a character column
 * (PostgreSQL 22021, MySQL "incorrect string value"), which would make a
 * lease fail at every attempt instead of at once.
 */
static size_t utf8_next(const unsigned char *s, size_t n, unsigned long *cp)
{
    size_t len, i;
    unsigned long v;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        v = s[0] & 0x1f;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        v = s[0] & 0x0f;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        v = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && v < 0x800) || (len == 4 && v < 0x10000) || v > 0x10ffff ||
        (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return len;
}

/* Unicode's white space (White_Space=yes) outside ASCII. */
static int unicode_space(unsigned long cp)
{
    return cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

int sqle_check_text(const char *field, const char *s, size_t max, int edge_space_ok,
                    sqlease_error *err)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n, i, len;
    unsigned long cp;
    int first_space = 0, last_space = 0, all_space = 1;

    if (s == NULL)
        return sqle_fail(err, SQLEASE_EINVAL, "%s is NULL", field);
    n = strlen(s);
    if (n == 0)
        return sqle_fail(err, SQLEASE_EINVAL, "%s is empty", field);
    if (n > max)
        return sqle_fail(err, SQLEASE_EINVAL, "%s is %zu bytes; at most %zu", field, n, max);
    for (i = 0; i < n; i += len) {
        int space;

        len = utf8_next(u + i, n - i, &cp);
        if (len == 0)
            return sqle_fail(err, SQLEASE_EINVAL,
                             "%s is not valid UTF-8 (byte %zu of %zu): the database would "
                             "refuse it", field, i + 1, n);
        if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
            return sqle_fail(err, SQLEASE_EINVAL,
                             "%s contains a control character (byte %zu)", field, i + 1);
        space = cp == ' ' || unicode_space(cp);
        if (i == 0)
            first_space = space;
        last_space = space;
        if (!space)
            all_space = 0;
    }
    if (all_space)
        return sqle_fail(err, SQLEASE_EINVAL, "%s is only white space", field);
    if ((first_space || last_space) && !edge_space_ok)
        return sqle_fail(err, SQLEASE_EINVAL,
                         "%s '%s' %s with white space: not allowed, since databases that "
                         "compare with pad-space collations ignore a trailing space, and "
                         "two ids that differ only there look alike", field, s,
                         first_space ? "starts" : "ends");
    return SQLEASE_OK;
}

/*
 * How one character of a text read from the table is shown to a person
 * (a terminal, a log line): anyone who may write the row chose those
 * bytes, and a control character reaching a terminal is a command to it
 * (ESC [2J clears the screen, ESC ]0; sets the window's title; C1 codes
 * do the same on terminals that take them).  So control characters (C0,
 * DEL) and bytes that are not UTF-8 show as \xHH, C1 code points
 * (U+0080..U+009F) as \u00HH; in quotes, a quote or backslash gets a
 * backslash before it.  Everything else is copied as it is.  Writes the
 * shown form (at most 6 bytes) to out and returns how many input bytes it
 * stands for (at least 1).
 */
static size_t shown_char(const unsigned char *u, size_t n, int quoted, char *out,
                         size_t *outlen)
{
    static const char hex[] = "0123456789abcdef";
    unsigned long cp;
    size_t len = utf8_next(u, n, &cp);

    if (len == 0 || cp < 0x20 || cp == 0x7f) {
        out[0] = '\\';
        out[1] = 'x';
        out[2] = hex[u[0] >> 4];
        out[3] = hex[u[0] & 0xf];
        *outlen = 4;
        return 1;
    }
    if (cp >= 0x80 && cp < 0xa0) {
        memcpy(out, "\\u00", 4);
        out[4] = hex[cp >> 4];
        out[5] = hex[cp & 0xf];
        *outlen = 6;
        return len;
    }
    if (quoted && (cp == '\'' || cp == '\\')) {
        out[0] = '\\';
        out[1] = (char)cp;
        *outlen = 2;
        return 1;
    }
    memcpy(out, u, len);
    *outlen = len;
    return len;
}

/* s as shown_char shows it, in single quotes when `quoted`, cut short
 * (never inside one character's form, and the closing quote kept) when
 * cap is too small. */
static const char *shown_text(const char *s, int quoted, char *buf, size_t cap)
{
    const unsigned char *u = (const unsigned char *)(s != NULL ? s : "");
    size_t n = strlen((const char *)u), i = 0, k = 0, end;

    if (cap == 0)
        return buf;
    if (quoted && cap < 3)
        quoted = 0; /* no room for the quotes */
    end = cap - 1 - (quoted ? 1 : 0);
    if (quoted)
        buf[k++] = '\'';
    while (i < n) {
        char one[8];
        size_t len, used = shown_char(u + i, n - i, quoted, one, &len);
        if (k + len > end)
            break;
        memcpy(buf + k, one, len);
        k += len;
        i += used;
    }
    if (quoted)
        buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

const char *sqle_show_text(const char *s, char *buf, size_t cap)
{
    return shown_text(s, 0, buf, cap);
}

/*
 * Owner ids may start or end with a space, and contain one: printed bare,
 * "held by worker  (token 7)" hides which.  Quoted only then (and when a
 * quote or backslash would make the quoting ambiguous, or a character is
 * shown escaped), so the usual host-pid-xxxxxxxx reads as it is.
 */
const char *sqle_quote_id(const char *id, char *buf, size_t cap)
{
    const unsigned char *u = (const unsigned char *)(id != NULL ? id : "");
    size_t n = strlen((const char *)u), i, len;
    unsigned long cp;
    int quote = n == 0;

    for (i = 0; i < n && !quote; i += len) {
        len = utf8_next(u + i, n - i, &cp);
        if (len == 0)
            len = 1, cp = 0;  /* not UTF-8: quoted, and shown escaped */
        if (cp == ' ' || cp == '\'' || cp == '"' || cp == '\\' || cp < 0x20 ||
            (cp >= 0x7f && cp < 0xa0) || unicode_space(cp))
            quote = 1;
    }
    return shown_text((const char *)u, quote, buf, cap);
}

/* The placeholders a template may name, in the order of the values
 * sqle_sql_for_all takes. */
#define NMARKS 3
static const char *const marks[NMARKS] = { "{table}", "{fire_table}", "{history_table}" };

/* The first of the placeholders at or after p, and which one (an index
 * into marks), or NULL.  Only the ones whose value is given count: a
 * placeholder without one stays as it is. */
static const char *next_mark(const char *p, const char *const *values, int *which)
{
    const char *best = NULL;
    int i;

    for (i = 0; i < NMARKS; i++) {
        const char *m = values[i] != NULL ? strstr(p, marks[i]) : NULL;
        if (m != NULL && (best == NULL || m < best)) {
            best = m;
            *which = i;
        }
    }
    return best;
}

/* Two passes over the template: the size, then the text.  The values are
 * validated identifiers, which hold no brace, so nothing substituted is
 * taken for a placeholder. */
char *sqle_sql_for_all(const char *tmpl, const char *table, const char *fire_table,
                       const char *history_table)
{
    const char *values[NMARKS];
    size_t n = 0;
    const char *p, *m;
    char *out, *o;
    int which = 0;

    values[0] = table;
    values[1] = fire_table;
    values[2] = history_table;
    if (tmpl == NULL || (table == NULL && fire_table == NULL && history_table == NULL))
        return NULL;
    for (p = tmpl; (m = next_mark(p, values, &which)) != NULL; p = m + strlen(marks[which]))
        n += (size_t)(m - p) + strlen(values[which]);
    n += strlen(p);
    out = malloc(n + 1);
    if (out == NULL)
        return NULL;
    o = out;
    for (p = tmpl; (m = next_mark(p, values, &which)) != NULL; p = m + strlen(marks[which])) {
        size_t vlen = strlen(values[which]);
        memcpy(o, p, (size_t)(m - p));
        o += m - p;
        memcpy(o, values[which], vlen);
        o += vlen;
    }
    memcpy(o, p, strlen(p) + 1);
    return out;
}

char *sqle_sql_for_tables(const char *tmpl, const char *table, const char *fire_table)
{
    return sqle_sql_for_all(tmpl, table, fire_table, NULL);
}

char *sqle_sql_for_table(const char *tmpl, const char *table)
{
    return table != NULL ? sqle_sql_for_tables(tmpl, table, NULL) : NULL;
}

/* ------------------------------------------------------------------ */
/* Logging                                                             */
/* ------------------------------------------------------------------ */

/* No default, as with the status names above: a level added to the
 * header without a name here fails the build under -Wswitch. */
static const char *level_name(int level)
{
    switch ((sqlease_log_level)level) {
    case SQLEASE_LOG_ERROR: return "error";
    case SQLEASE_LOG_WARN: return "warn";
    case SQLEASE_LOG_INFO: return "info";
    case SQLEASE_LOG_DEBUG: return "debug";
    }
    return "log";
}

/* Lines are formatted whole and written with one fwrite, so that lines
 * logged by several threads at once never interleave on stderr. */
void sqle_vlog(sqlease_log_fn fn, void *ud, int max_level, int level, const char *fmt,
               va_list ap)
{
    char line[SCRATCH];
    char out[SCRATCH + 32];
    int n;

    if (level > max_level || fmt == NULL)
        return;
    if (vsnprintf(line, sizeof line, fmt, ap) < 0)
        copy_trunc(line, sizeof line, "(log line could not be formatted)");
    sqle_redact_inplace(line);
    one_line(line);
    if (fn != NULL) {
        fn(ud, level, line);
        return;
    }
    n = snprintf(out, sizeof out, "sqlease: %s: %s\n", level_name(level), line);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof out) {
        n = (int)sizeof out - 1;
        out[n - 1] = '\n';
    }
    fwrite(out, 1, (size_t)n, stderr);
    fflush(stderr);
}

void sqle_log(sqlease_log_fn fn, void *ud, int max_level, int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sqle_vlog(fn, ud, max_level, level, fmt, ap);
    va_end(ap);
}
