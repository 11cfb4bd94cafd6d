/* cli_lines - stdin read a line at a time for the --lines forms (put,
 * ack): a batch holds the lines that are already there, so a slow
 * producer gets each line sent as it comes and a fast one gets big
 * batches. */
#ifndef SLUICE_TOOLS_CLI_LINES_H
#define SLUICE_TOOLS_CLI_LINES_H

#include <stdbool.h>
#include <stddef.h>

struct line_reader {
	char *buf;
	size_t len, cap;
	bool eof;
	unsigned long lineno;
};

/* A line of the reader's buffer, without its "\n" or "\r\n". Offsets, not
 * pointers: reading more may move the buffer. */
struct line_span {
	size_t start, len;
	unsigned long lineno; /* 1 for the first line of stdin */
};

/* Up to `max` complete lines (and about `max_bytes` bytes) from the
 * reader's buffer at *off on, reading stdin as needed: it blocks for the
 * first line, then takes only what is already there. Empty lines are
 * skipped (they count in line numbers). Returns 0 with *n spans and *off
 * past them (*n 0: the end of stdin), or -errno when reading failed. */
int lines_gather(struct line_reader *lr, size_t max, size_t max_bytes,
    struct line_span *out, size_t *n, size_t *off);

/* Forgets the first `off` bytes of the buffer (the lines handled).
 * Returns true when nothing is left to read. */
bool lines_consume(struct line_reader *lr, size_t off);

/* Frees the buffer. */
void lines_free(struct line_reader *lr);

#endif
