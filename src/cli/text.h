/*
 * text.h -- a growable text buffer: what the HTTP endpoints answer is
 * composed in memory (the metrics, a JSON object) and handed to the
 * server as a whole, where the files and stdout of the other commands
 * are written as they go.
 */
#ifndef SQLEASE_CLI_TEXT_H
#define SQLEASE_CLI_TEXT_H

#include <stddef.h>

#include "cli.h"

typedef struct cli_text {
    char *s;     /* NUL-terminated; NULL until something is added */
    size_t len;  /* bytes before the NUL */
    size_t cap;  /* bytes allocated */
    int failed;  /* an allocation failed: the text is incomplete */
} cli_text;

/* An empty text (nothing allocated yet). */
void cli_text_init(cli_text *t);
/* Append n bytes, or a string, or formatted text.  An allocation that
 * fails sets failed and appends nothing more. */
void cli_text_add(cli_text *t, const char *p, size_t n);
void cli_text_puts(cli_text *t, const char *s);
void cli_text_printf(cli_text *t, const char *fmt, ...) CLI_PRINTF(2, 3);
/* The text so far ("" when empty). */
const char *cli_text_str(const cli_text *t);
/* Empty it, keeping what it allocated. */
void cli_text_clear(cli_text *t);
void cli_text_free(cli_text *t);

#endif
