/*
 * json.c -- the JSON object writer behind `status --json`, `list --json`
 * and /holder.
 */
#include <inttypes.h>
#include <string.h>

#include "json.h"

/* Everything goes out through these two: the stream or the text. */
static void put(cli_json *j, const char *p, size_t n)
{
    if (j->out != NULL)
        fwrite(p, 1, n, j->out);
    else
        cli_text_add(j->text, p, n);
}

static void puts_(cli_json *j, const char *s)
{
    put(j, s, strlen(s));
}

/* A \u escape of one code point below U+0100. */
static void put_u(cli_json *j, unsigned c)
{
    char buf[8];

    snprintf(buf, sizeof buf, "\\u%04x", c);
    puts_(j, buf);
}

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
static void put_string(cli_json *j, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");

    puts_(j, "\"");
    while (*p) {
        int n;
        switch (*p) {
        case '"': puts_(j, "\\\""); p++; continue;
        case '\\': puts_(j, "\\\\"); p++; continue;
        case '\n': puts_(j, "\\n"); p++; continue;
        case '\r': puts_(j, "\\r"); p++; continue;
        case '\t': puts_(j, "\\t"); p++; continue;
        default: break;
        }
        if (*p < 0x20 || *p == 0x7F) {
            put_u(j, *p);
            p++;
            continue;
        }
        n = utf8_len(p);
        if (n == 0) {
            puts_(j, "\\ufffd");
            p++;
            continue;
        }
        if (n == 2 && p[0] == 0xC2 && p[1] < 0xA0) {
            put_u(j, p[1]);
            p += 2;
            continue;
        }
        put(j, (const char *)p, (size_t)n);
        p += n;
    }
    puts_(j, "\"");
}

static void key(cli_json *j, const char *k)
{
    if (j->fields++ > 0)
        puts_(j, ",");
    put_string(j, k);
    puts_(j, ":");
}

void cli_json_begin(cli_json *j, FILE *out)
{
    j->out = out;
    j->text = NULL;
    j->fields = 0;
    puts_(j, "{");
}

void cli_json_begin_text(cli_json *j, cli_text *text)
{
    j->out = NULL;
    j->text = text;
    j->fields = 0;
    puts_(j, "{");
}

void cli_json_string(cli_json *j, const char *k, const char *value)
{
    key(j, k);
    put_string(j, value);
}

void cli_json_int(cli_json *j, const char *k, int64_t value)
{
    char buf[32];

    key(j, k);
    snprintf(buf, sizeof buf, "%" PRId64, value);
    puts_(j, buf);
}

void cli_json_bool(cli_json *j, const char *k, int value)
{
    key(j, k);
    puts_(j, value ? "true" : "false");
}

void cli_json_null(cli_json *j, const char *k)
{
    key(j, k);
    puts_(j, "null");
}

void cli_json_string_or_null(cli_json *j, const char *k, const char *value)
{
    if (value != NULL)
        cli_json_string(j, k, value);
    else
        cli_json_null(j, k);
}

void cli_json_end(cli_json *j)
{
    puts_(j, "}\n");
}

void cli_json_close(cli_json *j)
{
    puts_(j, "}");
}

void cli_json_array_begin(cli_json *j, const char *k)
{
    key(j, k);
    puts_(j, "[");
    j->elements = 0;
}

void cli_json_element(cli_json *j, cli_json *e)
{
    if (j->elements++ > 0)
        puts_(j, ",");
    e->out = j->out;
    e->text = j->text;
    e->fields = 0;
    e->elements = 0;
    puts_(e, "{");
}

void cli_json_array_end(cli_json *j)
{
    puts_(j, "]");
}
