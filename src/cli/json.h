/*
 * json.h -- a minimal JSON object writer for `status --json`, `list
 * --json` and the HTTP endpoint /holder: objects of strings, integers,
 * booleans and nulls (and, for `status`'s ready followers, one array of
 * such objects), each on one line, written to a stream or into a text.
 * Writing only; sqlease never parses JSON.
 */
#ifndef SQLEASE_CLI_JSON_H
#define SQLEASE_CLI_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "text.h"

typedef struct cli_json {
    FILE *out;      /* the stream written to, */
    cli_text *text; /* or the text appended to (out NULL) */
    int fields;     /* members written so far, for the commas */
    int elements;   /* in an open array member: elements so far */
} cli_json;

void cli_json_begin(cli_json *j, FILE *out);
/* The same into a text (an HTTP answer). */
void cli_json_begin_text(cli_json *j, cli_text *text);
void cli_json_string(cli_json *j, const char *key, const char *value);
void cli_json_int(cli_json *j, const char *key, int64_t value);
void cli_json_bool(cli_json *j, const char *key, int value);
void cli_json_null(cli_json *j, const char *key);
/* A string member, or null when value is NULL. */
void cli_json_string_or_null(cli_json *j, const char *key, const char *value);
/* Close the object and end the line. */
void cli_json_end(cli_json *j);
/* Close the object and leave the line open (an array member). */
void cli_json_close(cli_json *j);
/* A member whose value is an array of objects: begin it, then begin each
 * element with cli_json_element (an object written where j writes, to
 * be closed with cli_json_close), then end the array. */
void cli_json_array_begin(cli_json *j, const char *key);
void cli_json_element(cli_json *j, cli_json *element);
void cli_json_array_end(cli_json *j);

#endif
