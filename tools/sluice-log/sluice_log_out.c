/* sluice_log_out - what sluice-log prints with: JSON strings, base64,
 * times, sizes, and a progress line for long runs on a terminal. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "sluice_log.h"
#include "util/clock.h"

bool lt_verbose;

void
lt_time(int64_t ms, char *out, size_t n)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	size_t k;

	if (ms < 0 || gmtime_r(&s, &tm) == NULL) {
		snprintf(out, n, "%" PRId64, ms);
		return;
	}
	k = strftime(out, n, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + k, n - k, ".%03dZ", (int)(ms % 1000));
}

void
lt_size(uint64_t bytes, char *out, size_t n)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(out, n, "%" PRIu64 " B", bytes);
		return;
	}
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(out, n, "%.1f %s", v, units[u]);
}

void
lt_age(int64_t ms, char *out, size_t n)
{
	int64_t s = ms / 1000;

	if (ms < 0)
		ms = 0;
	if (ms < 60000)
		snprintf(out, n, "%.1fs", (double)ms / 1000);
	else if (s < 3600)
		snprintf(out, n, "%" PRId64 "m%02ds", s / 60, (int)(s % 60));
	else if (s < 86400)
		snprintf(
		    out, n, "%" PRId64 "h%02dm", s / 3600, (int)(s / 60 % 60));
	else
		snprintf(out, n, "%" PRId64 "d%02dh", s / 86400,
		    (int)(s / 3600 % 24));
}

/* Strict UTF-8: no overlong forms, no surrogates, nothing above
 * U+10FFFF. */
bool
lt_utf8_valid(const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i = 0;

	while (i < n) {
		uint8_t c = s[i];
		size_t k;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			k = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i <= k)
			return false;
		for (size_t j = 1; j <= k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k + 1;
	}
	return true;
}

void
lt_json_str(struct buf *b, const void *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *s = p;

	buf_put_u8(b, '"');
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];

		switch (c) {
		case '"':
			buf_put(b, "\\\"", 2);
			break;
		case '\\':
			buf_put(b, "\\\\", 2);
			break;
		case '\n':
			buf_put(b, "\\n", 2);
			break;
		case '\r':
			buf_put(b, "\\r", 2);
			break;
		case '\t':
			buf_put(b, "\\t", 2);
			break;
		default:
			if (c < 0x20 || c == 0x7f) {
				char e[6] = { '\\', 'u', '0', '0', hex[c >> 4],
					hex[c & 15] };

				buf_put(b, e, sizeof(e));
			} else {
				buf_put_u8(b, c);
			}
		}
	}
	buf_put_u8(b, '"');
}

void
lt_base64(struct buf *b, const void *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	                          "qrstuvwxyz0123456789+/";
	const uint8_t *s = p;
	size_t i;

	for (i = 0; i + 3 <= n; i += 3) {
		uint32_t v =
		    (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		char o[4] = { tab[v >> 18], tab[(v >> 12) & 63],
			tab[(v >> 6) & 63], tab[v & 63] };

		buf_put(b, o, 4);
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)s[i] << 16;
		char o[4] = { tab[v >> 18], tab[(v >> 12) & 63], '=', '=' };

		buf_put(b, o, 4);
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
		char o[4] = { tab[v >> 18], tab[(v >> 12) & 63],
			tab[(v >> 6) & 63], '=' };

		buf_put(b, o, 4);
	}
}

void
lt_json_bytes(struct buf *b, const char *name, const void *p, size_t n)
{
	if (lt_utf8_valid(p, n)) {
		buf_printf(b, "\"%s\":", name);
		lt_json_str(b, p, n);
	} else {
		buf_printf(b, "\"%s_base64\":\"", name);
		lt_base64(b, p, n);
		buf_put_u8(b, '"');
	}
}

bool
lt_flush(struct buf *b, FILE *f)
{
	bool ok = !buf_failed(b) &&
	    (b->len == 0 || fwrite(b->data, 1, b->len, f) == b->len);

	buf_reset(b);
	return ok;
}

/* ---- names and numbers --------------------------------------------- */

bool
lt_parse_u64(const char *opt, const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-') {
		fprintf(stderr, "sluice-log: %s wants a number, not '%s'\n",
		    opt, s);
		return false;
	}
	*out = v;
	return true;
}

const char *
lt_type_name(uint16_t type)
{
	if (type >= QREC_PUT && type < QREC_TYPE_END_ &&
	    strcmp(qrec_type_name(type), "?") != 0)
		return qrec_type_name(type);
	if (type == REC_EPOCH)
		return "EPOCH";
	if (type == REC_PAD)
		return "PAD";
	return NULL;
}

bool
lt_type_unknown(uint16_t type)
{
	return type >= QREC_PUT && type <= QREC_TYPE_MAX &&
	    lt_type_name(type) == NULL;
}

uint16_t
lt_type_parse(const char *s)
{
	for (uint16_t t = QREC_PUT; t < QREC_TYPE_END_; t++)
		if (lt_type_name(t) != NULL &&
		    strcasecmp(s, lt_type_name(t)) == 0)
			return t;
	if (strcasecmp(s, "EPOCH") == 0)
		return REC_EPOCH;
	if (strcasecmp(s, "PAD") == 0)
		return REC_PAD;
	return 0;
}

void
lt_json_tube_conf(struct buf *b, const struct qrec_tube_conf *c)
{
	static const char *const names[] = { "ttr", "max_attempts",
		"backoff_base", "backoff_cap", "keep_done" };
	const uint8_t bits[] = { QREC_TS_TTR, QREC_TS_MAX_ATTEMPTS,
		QREC_TS_BACKOFF, QREC_TS_BACKOFF, QREC_TS_KEEP_DONE };
	const int64_t vals[] = { c->ttr, c->max_attempts, c->backoff_base,
		c->backoff_cap, c->keep_done };

	for (size_t i = 0; i < sizeof(bits); i++)
		if (c->set & bits[i])
			buf_printf(b, ",\"%s\":%" PRId64, names[i], vals[i]);
		else
			buf_printf(b, ",\"%s\":null", names[i]);
	buf_printf(b, ",\"lost_lease\":%s",
	    !(c->set & QREC_TS_LOST_LEASE) ? "null"
	        : c->lost_lease_immediate  ? "\"immediate\""
	                                   : "\"backoff\"");
	buf_printf(b, ",\"dead_letter\":");
	if (c->set & QREC_TS_DEAD_LETTER)
		lt_json_str(b, c->dead_letter, c->dead_letter_len);
	else
		buf_printf(b, "null");
}

uint64_t
lt_qrec_id(const struct qrec *r)
{
	switch (r->type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_G:
	case QREC_PUT_T:
	case QREC_PUT_X:
		return r->u.put.id;
	case QREC_PUTS: /* its first; the others follow it */
		return r->u.puts.first_id;
	case QREC_TAKE:
	case QREC_TAKE_LEASE:
		return r->u.take.id;
	case QREC_ACK:
	case QREC_ACK_R:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_UNTAKE:
	case QREC_SETBACK:
		return r->u.end.id;
	case QREC_CANCEL:
		return r->u.cancel.id;
	case QREC_TOUCH:
		return r->u.touch.id;
	case QREC_KICK:
		return r->u.kick.id;
	case QREC_DELETE:
		return r->u.del.id;
	case QREC_SCHED_FIRE:
		return r->u.sched.has_put ? r->u.sched.put.id : 0;
	case QREC_MOVE_KEY:
		return r->u.move.id; /* the reservation's id here */
	case QREC_MOVE_PLACE:
		return r->u.move.id; /* the placeholder's id here */
	case QREC_REPLACE:
	case QREC_REPLACE_V:
		return r->u.replace.id;
	case QREC_UPDATE:
		return r->u.update.id;
	}
	return 0;
}

/* ---- progress --------------------------------------------------------- */

enum { PROGRESS_EVERY_NS = 100 * 1000 * 1000 };

static struct {
	bool on;
	const char *what;
	size_t total;
	int64_t last_ns;
} prog;

bool lt_progress_off;

void
lt_progress_start(const char *what, size_t total)
{
	prog.on = total > 1 && !lt_progress_off && isatty(STDERR_FILENO);
	prog.what = what;
	prog.total = total;
	prog.last_ns = 0;
}

void
lt_progress(size_t done, const char *name)
{
	int64_t now;

	if (!prog.on)
		return;
	now = clock_mono_ns();
	if (prog.last_ns != 0 && now - prog.last_ns < PROGRESS_EVERY_NS &&
	    done + 1 < prog.total)
		return;
	prog.last_ns = now;
	fprintf(stderr, "\r\033[K%s %zu/%zu %s", prog.what, done + 1,
	    prog.total, name);
	fflush(stderr);
}

void
lt_progress_count(const char *what, uint64_t n, uint64_t lsn)
{
	int64_t now;

	if (lt_progress_off || (n & 4095) != 0 || !isatty(STDERR_FILENO))
		return;
	now = clock_mono_ns();
	if (prog.last_ns != 0 && now - prog.last_ns < PROGRESS_EVERY_NS)
		return;
	prog.on = true;
	prog.last_ns = now;
	fprintf(stderr, "\r\033[K%s %" PRIu64 " records (LSN %" PRIu64 ")",
	    what, n, lsn);
	fflush(stderr);
}

void
lt_progress_end(void)
{
	if (prog.on && prog.last_ns != 0) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	prog.on = false;
}
