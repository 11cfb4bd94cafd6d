/* cli_lines - stdin a line at a time, in batches of what is ready
 * (cli_lines.h): what put --lines and ack --lines read with. A batch ends
 * at the lines already there, so a slow producer gets each line sent as
 * it comes and a fast one gets big batches. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_lines.h"

/* Reads more of stdin; with `block` false only when some is ready. */
static int
lines_fill(struct line_reader *lr, bool block)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
	ssize_t n;

	if (lr->eof)
		return 0;
	if (!block && poll(&p, 1, 0) <= 0)
		return 0;
	if (lr->cap - lr->len < 65536) {
		size_t cap = lr->cap ? lr->cap * 2 : 131072;
		char *b = realloc(lr->buf, cap);

		if (b == NULL)
			return -ENOMEM;
		lr->buf = b;
		lr->cap = cap;
	}
	do
		n = read(STDIN_FILENO, lr->buf + lr->len, lr->cap - lr->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		lr->eof = true;
	lr->len += (size_t)n;
	return 0;
}

/* The next newline at or after `off`, or NULL. */
static char *
lines_next(const struct line_reader *lr, size_t off)
{
	return lr->len > off ? memchr(lr->buf + off, '\n', lr->len - off)
	                     : NULL;
}

int
lines_gather(struct line_reader *lr, size_t max, size_t max_bytes,
    struct line_span *out, size_t *n, size_t *off)
{
	size_t bytes = 0;
	int rc;

	*n = 0;
	while (*n < max && bytes < max_bytes) {
		char *nl = lines_next(lr, *off);
		size_t end;

		if (nl == NULL && !lr->eof) {
			if ((rc = lines_fill(lr, *n == 0)) != 0)
				return rc;
			if (lines_next(lr, *off) == NULL && !lr->eof && *n > 0)
				break; /* nothing more ready now */
			continue;
		}
		end = nl ? (size_t)(nl - lr->buf) : lr->len;
		if (nl == NULL && end == *off)
			break; /* eof */
		lr->lineno++;
		if (end > *off && lr->buf[end - 1] == '\r')
			end--;
		if (end > *off) {
			out[*n].start = *off;
			out[*n].len = end - *off;
			out[*n].lineno = lr->lineno;
			bytes += end - *off;
			(*n)++;
		}
		*off = nl ? (size_t)(nl - lr->buf) + 1 : lr->len;
	}
	return 0;
}

bool
lines_consume(struct line_reader *lr, size_t off)
{
	if (off > 0) {
		memmove(lr->buf, lr->buf + off, lr->len - off);
		lr->len -= off;
	}
	return lr->eof && lr->len == 0;
}

void
lines_free(struct line_reader *lr)
{
	free(lr->buf);
	lr->buf = NULL;
}
