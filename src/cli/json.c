/*
 * json.c -- the JSON object writer behind `status --json` and `list
 * --json`.
 */
#include <inttypes.h>

#include "json.h"

/* Length of the well-formed UTF-8 sequence at s, or 0 if the bytes there
 * are not one (overlong, surrogate, out of range or truncated). */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    int n;
    uint32_t cp;

    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; cp = c & 0x07; }
    else return 0;
    for (int k = 1; k < n; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

/* Quote a string: the two characters JSON reserves and every control
 * character are escaped (C0 and DEL, which JSON requires or allows, and
 * the C1 code points U+0080..U+009F, which it allows: some terminals act
 * on them, and JSON is read on terminals too), and bytes that are not
 * UTF-8 (an owner id is whatever the database holds) become U+FFFD so
 * the output stays valid. */
static void put_string(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");

    fputc('"', out);
    while (*p) {
        int n;
        switch (*p) {
        case '"': fputs("\\\"", out); p++; continue;
        case '\\': fputs("\\\\", out); p++; continue;
        case '\n': fputs("\\n", out); p++; continue;
        case '\r': fputs("\\r", out); p++; continue;
        case '\t': fputs("\\t", out); p++; continue;
        default: break;
        }
        if (*p < 0x20 || *p == 0x7F) {
            fprintf(out, "\\u%04x", *p);
            p++;
            continue;
        }
        n = utf8_len(p);
        if (n == 0) {
            fputs("\\ufffd", out);
            p++;
            continue;
        }
        if (n == 2 && p[0] == 0xC2 && p[1] < 0xA0) {
            fprintf(out, "\\u%04x", p[1]);
            p += 2;
            continue;
        }
        fwrite(p, 1, (size_t)n, out);
        p += n;
    }
    fputc('"', out);
}

static void key(cli_json *j, const char *k)
{
    if (j->fields++ > 0)
        fputc(',', j->out);
    put_string(j->out, k);
    fputc(':', j->out);
}

void cli_json_begin(cli_json *j, FILE *out)
{
    j->out = out;
    j->fields = 0;
    fputc('{', out);
}

void cli_json_string(cli_json *j, const char *k, const char *value)
{
    key(j, k);
    put_string(j->out, value);
}

void cli_json_int(cli_json *j, const char *k, int64_t value)
{
    key(j, k);
    fprintf(j->out, "%" PRId64, value);
}

void cli_json_bool(cli_json *j, const char *k, int value)
{
    key(j, k);
    fputs(value ? "true" : "false", j->out);
}

void cli_json_string_or_null(cli_json *j, const char *k, const char *value)
{
    if (value != NULL) {
        cli_json_string(j, k, value);
        return;
    }
    key(j, k);
    fputs("null", j->out);
}

void cli_json_end(cli_json *j)
{
    fputs("}\n", j->out);
}

void cli_json_close(cli_json *j)
{
    fputc('}', j->out);
}
