/*
 * fuzzutil.h -- what the libFuzzer targets in tests/fuzz/ share: turning
 * the fuzzer's bytes into C strings and fields, the independent
 * reference checks they compare the library against (UTF-8, one-line
 * messages), and FZ_CHECK, which reports a broken property and aborts so
 * that libFuzzer saves the input that broke it.
 */
#ifndef SQLEASE_FUZZUTIL_H
#define SQLEASE_FUZZUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "sqlease.h"

/* The fuzzer's entry points (libFuzzer calls them; declared for -Wextra). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Report that `what` does not hold (printf-style), with the input that
 * broke it, and abort: libFuzzer then writes the crash-* file. */
void fz_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
#define FZ_CHECK(cond, ...) \
    do { \
        if (!(cond)) \
            fz_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

/* Call first in LLVMFuzzerInitialize: keeps a descriptor to report on
 * even when the run closes stderr (-close_fd_mask=2, which the CLI
 * target needs: the tool prints every usage error). */
void fz_init(void);

/* Remember the input being tested, for fz_fail's report. */
void fz_input(const uint8_t *data, size_t size);

/* A NUL-terminated copy of data[0..size), cut at the first NUL (a C
 * string cannot hold one).  Never NULL (aborts on out-of-memory). */
char *fz_cstr(const uint8_t *data, size_t size);

/* Split s in place at '\n' into at most max fields; returns how many
 * (at least 1).  Text seeds stay readable: one value per line. */
size_t fz_fields(char *s, char **field, size_t max);

/* Whether s[0..n) is well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF).  Written apart from the library's
 * decoders, on purpose. */
int fz_utf8_ok(const char *s, size_t n);

/* Decode one well-formed UTF-8 sequence at s (n bytes left); returns its
 * length, 0 if malformed. */
size_t fz_utf8_decode(const unsigned char *s, size_t n, uint32_t *cp);

/* Append code point cp as UTF-8 to out; returns bytes written (1..4). */
size_t fz_utf8_encode(uint32_t cp, char *out);

/* Unicode White_Space (ASCII and beyond), as the docs promise names are
 * checked against. */
int fz_white_space(uint32_t cp);

/* The documented grammar of a duration (decimal digits, then exactly
 * one of ms, s, m, h; at most SQLEASE_MAX_DURATION_MS; a zero needs no
 * unit): 1 and *ms if
 * sqlease must accept text, else 0. */
int fz_duration_ref(const char *text, int64_t *ms);

/* The documented rules for a lease name (edge_space_ok 0), an owner id
 * or the holder's data (1): 1..max bytes of well-formed UTF-8, no
 * control character (C0, DEL, C1), not only white space, and with
 * edge_space_ok 0 neither starting nor ending with white space.  1 if s
 * must be accepted. */
int fz_text_ref(const char *s, size_t max, int edge_space_ok);

/* Check an error the library filled: status `rc` (not OK), a non-empty
 * message of one line that fits the struct and is NUL-terminated. */
void fz_check_error(const sqlease_error *err, int rc, const char *what);

#endif
