/* bs_proto - beanstalkd's command syntax, checked the way beanstalkd 1.12
 * checks it, so that a client sees the same replies to the same bytes:
 *
 *   - A command is a line ended by "\r\n", at most BS_LINE_MAX bytes with
 *     them. A longer line is BAD_FORMAT and is discarded up to its end.
 *   - The command is the first name of the table below that the line
 *     starts with, in table order (so "reserve-job" without its argument
 *     is "reserve" followed by junk). Names with a trailing space take
 *     arguments; the others must be the whole line, else BAD_FORMAT. No
 *     name matches: UNKNOWN_COMMAND.
 *   - Integers: spaces, then decimal digits, within the field's range;
 *     nothing may follow the last one. kick and reserve-with-timeout
 *     read theirs leniently (C's strtoul / strtol), as beanstalkd does.
 *   - A put's body is <bytes> bytes then "\r\n": anything else there is
 *     EXPECTED_CRLF (the two bytes are used up). A body over max-job-size
 *     is read and thrown away, then JOB_TOO_BIG.
 *   - Names: see bs_name_valid(); the name is the rest of the line (use,
 *     watch, ignore, stats-tube) or ends at a space (pause-tube). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "server/face/beanstalk/bs_proto.h"

struct cmd_name {
	const char *name;
	enum bs_kind kind;
};

static const struct cmd_name cmds[] = {
	{ "put ", BS_PUT },
	{ "peek-ready", BS_PEEK_READY },
	{ "peek-delayed", BS_PEEK_DELAYED },
	{ "peek-buried", BS_PEEK_BURIED },
	{ "peek ", BS_PEEK },
	{ "reserve-with-timeout ", BS_RESERVE_TIMEOUT },
	{ "reserve-job ", BS_RESERVE_JOB },
	{ "reserve", BS_RESERVE },
	{ "delete ", BS_DELETE },
	{ "release ", BS_RELEASE },
	{ "bury ", BS_BURY },
	{ "kick-job ", BS_KICK_JOB },
	{ "kick ", BS_KICK },
	{ "touch ", BS_TOUCH },
	{ "stats-job ", BS_STATS_JOB },
	{ "stats-tube ", BS_STATS_TUBE },
	{ "stats", BS_STATS },
	{ "use ", BS_USE },
	{ "watch ", BS_WATCH },
	{ "ignore ", BS_IGNORE },
	{ "list-tubes-watched", BS_LIST_TUBES_WATCHED },
	{ "list-tube-used", BS_LIST_TUBE_USED },
	{ "list-tubes", BS_LIST_TUBES },
	{ "quit", BS_QUIT },
	{ "pause-tube ", BS_PAUSE_TUBE },
};

static const char *const kind_names[BS_KIND_END_] = {
	[BS_PUT] = "put",
	[BS_USE] = "use",
	[BS_RESERVE] = "reserve",
	[BS_RESERVE_TIMEOUT] = "reserve-with-timeout",
	[BS_RESERVE_JOB] = "reserve-job",
	[BS_DELETE] = "delete",
	[BS_RELEASE] = "release",
	[BS_BURY] = "bury",
	[BS_TOUCH] = "touch",
	[BS_WATCH] = "watch",
	[BS_IGNORE] = "ignore",
	[BS_PEEK] = "peek",
	[BS_PEEK_READY] = "peek-ready",
	[BS_PEEK_DELAYED] = "peek-delayed",
	[BS_PEEK_BURIED] = "peek-buried",
	[BS_KICK] = "kick",
	[BS_KICK_JOB] = "kick-job",
	[BS_STATS_JOB] = "stats-job",
	[BS_STATS_TUBE] = "stats-tube",
	[BS_STATS] = "stats",
	[BS_LIST_TUBES] = "list-tubes",
	[BS_LIST_TUBE_USED] = "list-tube-used",
	[BS_LIST_TUBES_WATCHED] = "list-tubes-watched",
	[BS_PAUSE_TUBE] = "pause-tube",
	[BS_QUIT] = "quit",
};

const char *
bs_kind_name(enum bs_kind kind)
{
	return kind > BS_NONE && kind < BS_KIND_END_ ? kind_names[kind] : NULL;
}

const char *
bs_err_line(enum bs_err err)
{
	switch (err) {
	case BS_BAD_FORMAT:
		return "BAD_FORMAT\r\n";
	case BS_UNKNOWN_COMMAND:
		return "UNKNOWN_COMMAND\r\n";
	case BS_EXPECTED_CRLF:
		return "EXPECTED_CRLF\r\n";
	case BS_JOB_TOO_BIG:
		return "JOB_TOO_BIG\r\n";
	default:
		return "";
	}
}

/* ---- names ----------------------------------------------------------- */

static bool
name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') || strchr("-+/;.$_()", ch) != NULL;
}

bool
bs_name_valid(const char *p, size_t len)
{
	if (len == 0 || len > BS_NAME_MAX || p[0] == '-')
		return false;
	for (size_t i = 0; i < len; i++)
		if (p[i] == '\0' || !name_char(p[i]))
			return false;
	return true;
}

static const char esc_from[] = "+;$()";
static const char esc_to[] = "psdoc";

size_t
bs_tube_to_sluice(const char *p, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		const char *e = p[i] != '\0' ? strchr(esc_from, p[i]) : NULL;

		if (n + (e != NULL ? 2 : 1) > BS_NAME_MAX)
			return 0;
		if (e != NULL) {
			out[n++] = ':';
			out[n++] = esc_to[e - esc_from];
		} else {
			out[n++] = p[i];
		}
	}
	return n;
}

size_t
bs_tube_from_sluice(const char *p, size_t len, char *out)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		const char *e = p[i] == ':' && i + 1 < len && p[i + 1] != '\0'
		    ? strchr(esc_to, p[i + 1])
		    : NULL;

		if (e != NULL) {
			out[n++] = esc_from[e - esc_to];
			i++;
		} else {
			out[n++] = p[i];
		}
	}
	return n;
}

bool
bs_tube_reachable(const char *p, size_t len)
{
	char name[BS_NAME_MAX + 1], back[BS_NAME_MAX + 1];
	size_t n, m;

	if (len == 0 || len > BS_NAME_MAX)
		return false;
	n = bs_tube_from_sluice(p, len, name);
	if (!bs_name_valid(name, n))
		return false;
	m = bs_tube_to_sluice(name, n, back);
	return m == len && memcmp(back, p, len) == 0;
}

/* ---- arguments ------------------------------------------------------- */

/* Spaces, then digits up to `max`. *s moves past them. */
static bool
read_num(const char **s, const char *end, uint64_t max, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;

	while (p < end && *p == ' ')
		p++;
	if (p == end || *p < '0' || *p > '9')
		return false;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	if (v > max)
		return false;
	*s = p;
	*out = v;
	return true;
}

static bool
read_u32(const char **s, const char *end, uint32_t *out)
{
	uint64_t v;

	if (!read_num(s, end, UINT32_MAX, &v))
		return false;
	*out = (uint32_t)v;
	return true;
}

/* The lenient readers: C's conversions on a NUL-ended copy. */
static bool
read_lenient(const char *s, const char *end, bool sign, uint64_t *u, int64_t *i)
{
	char tmp[BS_LINE_MAX + 1], *e;
	size_t n = (size_t)(end - s);

	memcpy(tmp, s, n);
	tmp[n] = '\0';
	errno = 0;
	if (sign)
		*i = strtoll(tmp, &e, 10);
	else
		*u = strtoull(tmp, &e, 10);
	return e != tmp && errno == 0;
}

/* The arguments of a command whose name (and its space) was `skip`
 * bytes of the line [s, end). */
static enum bs_err
parse_args(struct bs_cmd *c, const char *s, const char *end)
{
	const char *sp;
	bool ok = true;

	switch (c->kind) {
	case BS_PUT:
		ok = read_u32(&s, end, &c->pri) &&
		    read_u32(&s, end, &c->delay) &&
		    read_u32(&s, end, &c->ttr) &&
		    read_num(&s, end, UINT32_MAX, &c->id);
		c->body_len = (size_t)c->id;
		c->id = 0;
		if (c->ttr == 0)
			c->ttr = 1;
		/* beanstalkd counts a put once its numbers are read, and
		 * looks for junk after them later */
		if (ok)
			c->count_as = BS_PUT;
		ok = ok && s == end;
		break;
	case BS_RESERVE_TIMEOUT:
		ok = read_lenient(s, end, true, NULL, &c->timeout);
		break;
	case BS_KICK:
		ok = read_lenient(s, end, false, &c->bound, NULL);
		break;
	case BS_RESERVE_JOB:
	case BS_DELETE:
	case BS_TOUCH:
	case BS_PEEK:
	case BS_KICK_JOB:
	case BS_STATS_JOB:
		ok = read_num(&s, end, UINT64_MAX, &c->id) && s == end;
		break;
	case BS_RELEASE:
		ok = read_num(&s, end, UINT64_MAX, &c->id) &&
		    read_u32(&s, end, &c->pri) &&
		    read_u32(&s, end, &c->delay) && s == end;
		break;
	case BS_BURY:
		ok = read_num(&s, end, UINT64_MAX, &c->id) &&
		    read_u32(&s, end, &c->pri) && s == end;
		break;
	case BS_USE:
	case BS_WATCH:
	case BS_IGNORE:
	case BS_STATS_TUBE:
		c->tube = s;
		c->tube_len = (size_t)(end - s);
		ok = bs_name_valid(c->tube, c->tube_len);
		break;
	case BS_PAUSE_TUBE:
		sp = memchr(s, ' ', (size_t)(end - s));
		ok = sp != NULL;
		if (ok) {
			c->tube = s;
			c->tube_len = (size_t)(sp - s);
			s = sp;
			ok = bs_name_valid(c->tube, c->tube_len) &&
			    read_u32(&s, end, &c->delay) && s == end;
		}
		break;
	default:
		break;
	}
	if (ok)
		c->count_as = c->kind;
	return ok ? BS_OK : BS_BAD_FORMAT;
}

/* Which command the line [p, end) is. */
static enum bs_err
parse_line(struct bs_cmd *c, const char *p, const char *end)
{
	size_t len = (size_t)(end - p);

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		size_t n = strlen(cmds[i].name);

		if (len < n || memcmp(p, cmds[i].name, n) != 0)
			continue;
		c->kind = cmds[i].kind;
		if (cmds[i].name[n - 1] == ' ')
			return parse_args(c, p + n, end);
		/* no arguments: the name is the whole line (quit: any) */
		if (len != n && c->kind != BS_QUIT)
			return BS_BAD_FORMAT;
		c->count_as = c->kind;
		return BS_OK;
	}
	return BS_UNKNOWN_COMMAND;
}

/* Where "\r\n" starts in [p, p + len), or NULL. */
static const char *
find_crlf(const char *p, size_t len)
{
	for (const char *q = p; len >= 2 && q <= p + len - 2; q++) {
		q = memchr(q, '\r', (size_t)(p + len - 1 - q));
		if (q == NULL)
			return NULL;
		if (q[1] == '\n')
			return q;
	}
	return NULL;
}

size_t
bs_parse(struct bs_parser *ps, const char *p, size_t len, size_t max_job,
    struct bs_cmd *out, enum bs_err *err)
{
	const char *eol;
	size_t used;

	memset(out, 0, sizeof(*out));
	*err = BS_OK;
	if (len == 0)
		return 0;
	if (ps->skip > 0) {
		used = ps->skip < len ? (size_t)ps->skip : len;
		ps->skip -= used;
		if (ps->skip == 0)
			*err = BS_JOB_TOO_BIG;
		return used;
	}
	if (ps->skip_line) {
		/* keep a final '\r': it may start the "\r\n" */
		eol = find_crlf(p, len);
		if (eol == NULL) {
			used = p[len - 1] == '\r' ? len - 1 : len;
			return used;
		}
		ps->skip_line = false;
		return (size_t)(eol - p) + 2;
	}
	eol = find_crlf(p, len < BS_LINE_MAX ? len : BS_LINE_MAX);
	if (eol == NULL) {
		if (len < BS_LINE_MAX)
			return 0;
		ps->skip_line = true;
		*err = BS_BAD_FORMAT;
		/* keep the last byte: it may be the '\r' of the end */
		return BS_LINE_MAX - 1;
	}
	used = (size_t)(eol - p) + 2;
	*err = parse_line(out, p, eol);
	if (*err != BS_OK) {
		enum bs_kind count_as = out->count_as;

		memset(out, 0, sizeof(*out)); /* nothing half parsed */
		out->count_as = count_as;
		return used;
	}
	if (out->kind != BS_PUT)
		return used;
	if (out->body_len > max_job) {
		ps->skip = (uint64_t)out->body_len + 2;
		out->kind = BS_NONE;
		return used;
	}
	if (len - used < out->body_len + 2) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	out->body = p + used;
	if (memcmp(p + used + out->body_len, "\r\n", 2) != 0) {
		*err = BS_EXPECTED_CRLF;
		out->kind = BS_NONE;
	}
	return used + out->body_len + 2;
}
