/*
 * json.h -- a minimal JSON object writer for `status --json` and `list
 * --json`: flat objects of strings, integers, booleans and nulls, each on
 * one line.  Writing only; sqlease never parses JSON.
 */
#ifndef SQLEASE_CLI_JSON_H
#define SQLEASE_CLI_JSON_H

#include <stdint.h>
#include <stdio.h>

typedef struct cli_json {
    FILE *out;
    int fields; /* members written so far, for the commas */
} cli_json;

void cli_json_begin(cli_json *j, FILE *out);
void cli_json_string(cli_json *j, const char *key, const char *value);
void cli_json_int(cli_json *j, const char *key, int64_t value);
void cli_json_bool(cli_json *j, const char *key, int value);
/* A string member, or null when value is NULL. */
void cli_json_string_or_null(cli_json *j, const char *key, const char *value);
/* Close the object and end the line. */
void cli_json_end(cli_json *j);
/* Close the object and leave the line open (an array member). */
void cli_json_close(cli_json *j);

#endif
