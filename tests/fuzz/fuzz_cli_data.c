/*
 * fuzz_cli_data.c -- libFuzzer target for the tool's --data S (run and
 * supervise): the flag parsing of src/cli/session.c, the check the tool
 * applies before connecting, and the two ways the value comes back out:
 * the database row (written by the take through the SQLite ODBC driver,
 * read by status) and `status --json` (src/cli/json.c).
 *
 * Properties, beyond not crashing:
 *  - "--data S" and "--data=S" both give S, unchanged;
 *  - the tool's check accepts exactly what the documented rules allow
 *    (1..SQLEASE_MAX_DATA bytes of UTF-8, no control character, not only
 *    white space), and refuses with a one-line message;
 *  - accepted data comes back from the database byte for byte;
 *  - the JSON the tool prints for it is valid JSON (checked by a
 *    reference reader here) whose string is S again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzzutil.h"
#include "json.h"
#include "session.h"

static sqlease_db *db;
static char db_path[512];

static void parse_flags(char **argv, int argc, const char *value)
{
    cli_args a;
    cli_job_flags f;
    int is_run, rc;

    for (is_run = 0; is_run <= 1; is_run++) {
        memset(&a, 0, sizeof a);
        a.command = is_run ? "run" : "supervise";
        a.cmd_argc = argc;
        a.cmd_argv = argv;
        rc = cli_job_flags_parse(&a, is_run, &f);
        FZ_CHECK(rc == CLI_CONTINUE, "%s %s -- true: exit %d", a.command, argv[0], rc);
        FZ_CHECK(f.data != NULL && strcmp(f.data, value) == 0, "--data gave '%s', not '%s'",
                 f.data, value);
        FZ_CHECK(f.cmd != NULL && strcmp(f.cmd[0], "true") == 0, "CMD lost");
    }
}

/* Append the UTF-8 of a \uXXXX escape at *p (surrogate pairs joined). */
static size_t json_u(const char **p, char *out)
{
    unsigned long cp = strtoul((char[5]){ (*p)[0], (*p)[1], (*p)[2], (*p)[3], 0 }, NULL, 16);
    *p += 4;
    if (cp >= 0xd800 && cp <= 0xdbff) {
        unsigned long lo;
        FZ_CHECK((*p)[0] == '\\' && (*p)[1] == 'u', "JSON: lone high surrogate");
        lo = strtoul((char[5]){ (*p)[2], (*p)[3], (*p)[4], (*p)[5], 0 }, NULL, 16);
        FZ_CHECK(lo >= 0xdc00 && lo <= 0xdfff, "JSON: bad low surrogate");
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        *p += 6;
    }
    FZ_CHECK(!(cp >= 0xdc00 && cp <= 0xdfff), "JSON: lone low surrogate");
    return fz_utf8_encode((uint32_t)cp, out);
}

/* The tool's JSON for {"data": value}, read back by the rules of RFC 8259. */
static void check_json(const char *value)
{
    static const char head[] = "{\"data\":\"";
    char *buf = NULL, *got;
    size_t len = 0, n = 0;
    const char *p;
    FILE *out = open_memstream(&buf, &len);
    cli_json j;

    FZ_CHECK(out != NULL, "open_memstream");
    cli_json_begin(&j, out);
    cli_json_string_or_null(&j, "data", value);
    cli_json_end(&j);
    fclose(out);
    FZ_CHECK(fz_utf8_ok(buf, len), "the JSON is not UTF-8: %s", buf);
    FZ_CHECK(strncmp(buf, head, sizeof head - 1) == 0, "JSON starts '%.20s'", buf);
    got = malloc(len + 1);
    if (got == NULL)
        abort();
    for (p = buf + sizeof head - 1; *p != '"'; ) {
        unsigned char c = (unsigned char)*p;
        FZ_CHECK(c != '\0', "JSON string not closed: %s", buf);
        FZ_CHECK(c >= 0x20, "JSON string holds control byte 0x%02x: %s", c, buf);
        if (c != '\\') {
            got[n++] = *p++;
            continue;
        }
        p++;
        switch (*p++) {
        case '"': got[n++] = '"'; break;
        case '\\': got[n++] = '\\'; break;
        case '/': got[n++] = '/'; break;
        case 'b': got[n++] = '\b'; break;
        case 'f': got[n++] = '\f'; break;
        case 'n': got[n++] = '\n'; break;
        case 'r': got[n++] = '\r'; break;
        case 't': got[n++] = '\t'; break;
        case 'u': n += json_u(&p, got + n); break;
        default: FZ_CHECK(0, "JSON: bad escape \\%c in %s", p[-1], buf);
        }
    }
    FZ_CHECK(strcmp(p, "\"}\n") == 0, "JSON does not end the object: %s", p);
    FZ_CHECK(n == strlen(value) && memcmp(got, value, n) == 0,
             "JSON string reads '%.*s', not '%s'", (int)n, got, value);
    free(got);
    free(buf);
}

/* Take a lease publishing value, read the row back, release. */
static void check_db(const char *value)
{
    sqlease_options o;
    sqlease_lease *l = NULL;
    sqlease_lease_info info;
    sqlease_error err;
    int rc, released = 0;

    sqlease_options_init(&o);
    o.table = "fz_data";
    o.name = "job";
    o.owner = "fuzzer";
    o.ttl_ms = 60000;
    o.data = value;
    rc = sqlease_lease_new(&l, db, &o, &err);
    FZ_CHECK(rc == SQLEASE_OK, "lease_new: %s", err.message);
    rc = sqlease_lease_acquire(l, &info, &err);
    FZ_CHECK(rc == SQLEASE_OK, "acquire: %s", err.message);
    rc = sqlease_lease_status(l, &info, &err);
    FZ_CHECK(rc == SQLEASE_OK, "status: %s", err.message);
    FZ_CHECK(strcmp(info.data, value) == 0, "data '%s' came back from the database as '%s'",
             value, info.data);
    rc = sqlease_lease_release(l, &released, &err);
    FZ_CHECK(rc == SQLEASE_OK && released, "release: %s", err.message);
    sqlease_lease_free(l);
}

static void remove_db(void)
{
    sqlease_db_close(db);
    unlink(db_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    sqlease_db_options o;
    sqlease_error err;
    char conn[600];
    const char *tmp = getenv("TMPDIR");

    (void)argc;
    (void)argv;
    fz_init();
    snprintf(db_path, sizeof db_path, "%s/sqlease-fuzz-data-%ld.db",
             tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", (long)getpid());
    snprintf(conn, sizeof conn, "Driver=SQLite3;Database=%s", db_path);
    sqlease_db_options_init(&o);
    o.conn = conn;
    if (sqlease_db_open(&db, &o, &err) != SQLEASE_OK ||
        sqlease_migrate(db, "fz_data", (const char *const[]){ "job" }, 1, &err) != SQLEASE_OK) {
        fprintf(stderr, "fuzz_cli_data: cannot open %s: %s\n", db_path, err.message);
        abort();
    }
    atexit(remove_db);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *value, *joined;
    char *argv[5];
    sqlease_options o;
    sqlease_error err;
    int rc;

    if (size > 2 * SQLEASE_MAX_DATA)
        return 0;
    fz_input(data, size);
    value = fz_cstr(data, size);
    argv[0] = "--data";
    argv[1] = value;
    argv[2] = "--";
    argv[3] = "true";
    argv[4] = NULL;
    parse_flags(argv, 4, value);
    joined = malloc(strlen(value) + sizeof "--data=");
    if (joined == NULL)
        abort();
    sprintf(joined, "--data=%s", value);
    argv[0] = joined;
    argv[1] = "--";
    argv[2] = "true";
    argv[3] = NULL;
    parse_flags(argv, 3, value);

    /* The tool's check (cli_session_start). */
    sqlease_options_init(&o);
    o.data = value;
    rc = sqlease_options_check(&o, &err);
    if (rc != SQLEASE_OK) {
        fz_check_error(&err, rc, "--data");
        FZ_CHECK(!fz_text_ref(value, SQLEASE_MAX_DATA, 1), "--data '%s' refused: %s", value,
                 err.message);
    } else {
        FZ_CHECK(fz_text_ref(value, SQLEASE_MAX_DATA, 1), "--data '%s' accepted", value);
        check_json(value);
        check_db(value);
    }
    free(joined);
    free(value);
    return 0;
}
