/* cli_util - the pure helpers of the sluice command-line tool: parsing
 * numbers, JSON string output, base64, UTF-8 validation,
 * time formatting and the edit distance of a mistyped name. No I/O other than
 * the FILE they are given. */
#ifndef SLUICE_TOOLS_CLI_UTIL_H
#define SLUICE_TOOLS_CLI_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The edit distance (Levenshtein: insertions, deletions, substitutions)
 * between two strings of up to 63 bytes; 64 for longer ones. */
unsigned cli_edit_distance(const char *a, const char *b);

/* A whole decimal number in [0, max]. Returns 0 and `*out`; -1 otherwise
 * (empty, sign, garbage, over max). */
int cli_parse_uint(const char *s, uint64_t max, uint64_t *out);

/* True when `len` bytes at `p` are valid UTF-8 (no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
bool cli_utf8_valid(const void *p, size_t len);

/* The longest prefix of at most `max` bytes of `s` that does not end in
 * the middle of a UTF-8 sequence. */
size_t cli_utf8_cut(const char *s, size_t len, size_t max);

/* Writes `len` bytes as a JSON string, quotes included: RFC 8259
 * escaping; bytes that are not valid UTF-8 become U+FFFD. */
void cli_json_str(FILE *f, const void *p, size_t len);

/* cli_json_str of a C string, or `null` for NULL. */
void cli_json_cstr(FILE *f, const char *s);

/* Standard base64 (RFC 4648, with padding) of `len` bytes. */
void cli_base64(FILE *f, const void *p, size_t len);

/* ISO 8601 in local time, with its zone: "2024-06-01T12:00:00.123+02:00";
 * "-" for 0. */
void cli_fmt_time(char *out, size_t n, uint64_t unix_ms);

/* "312 B", "1.5 KiB", "64.0 MiB", "1.2 GiB". */
void cli_fmt_size(char *out, size_t n, uint64_t bytes);

/* Writes `len` bytes for a human: valid UTF-8 as it is (control bytes other
 * than newline and tab escaped), anything else as \xNN. */
void cli_print_bytes(FILE *f, const void *p, size_t len);

#endif
