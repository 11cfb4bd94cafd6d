/* probe - see probe.h. One socket, non-blocking, every wait bounded by
 * the budget; nothing is kept. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>

#include "client/probe.h"

enum { PROBE_QUIET_MS = 150 }; /* how long an nng peer may take to speak */

static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits up to `ms` for `events` on fd; true when they came. */
static bool
wait_fd(int fd, short events, long long ms)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (ms < 0)
		ms = 0;
	return poll(&p, 1, (int)ms) == 1;
}

/* Reads what arrives until `deadline` (monotonic ms) or the buffer is
 * full or the peer closes; returns the bytes read. */
static size_t
read_some(int fd, unsigned char *b, size_t cap, long long deadline)
{
	size_t n = 0;

	while (n < cap && wait_fd(fd, POLLIN, deadline - mono_ms())) {
		ssize_t r = read(fd, b + n, cap - n);

		if (r <= 0)
			break;
		n += (size_t)r;
		if (n >= 8)
			break; /* enough to tell */
	}
	return n;
}

static const char *
sp_proto_name(unsigned id)
{
	switch (id) {
	case 0x10:
		return "PAIR";
	case 0x20:
		return "PUB";
	case 0x21:
		return "SUB";
	case 0x30:
		return "REQ";
	case 0x31:
		return "REP";
	case 0x50:
		return "PUSH";
	case 0x51:
		return "PULL";
	case 0x62:
		return "SURVEYOR";
	case 0x63:
		return "RESPONDENT";
	case 0x70:
		return "BUS";
	}
	return "unknown";
}

/* Names what answered with `b` (n bytes, n > 0). */
static void
classify(const unsigned char *b, size_t n, char *out, size_t cap)
{
	static const char *const bs[] = { "UNKNOWN_COMMAND", "BAD_FORMAT",
		"OUT_OF_MEMORY", "INTERNAL_ERROR" };

	if (n >= 6 && b[0] == 0 && b[1] == 'S' && b[2] == 'P' && b[3] == 0) {
		snprintf(out, cap,
		    "an nng peer of protocol %s answers there, not a sluice "
		    "server",
		    sp_proto_name((unsigned)b[4] << 8 | b[5]));
		return;
	}
	if (n >= 5 && memcmp(b, "HTTP/", 5) == 0) {
		snprintf(out, cap,
		    "an HTTP server answers there, not a sluice server; is "
		    "it sluiced's --http port?");
		return;
	}
	for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++) {
		size_t k = strlen(bs[i]) < n ? strlen(bs[i]) : n;

		if (memcmp(b, bs[i], k) == 0) {
			snprintf(out, cap,
			    "a beanstalkd-protocol server answers there, not "
			    "sluice's own protocol; is it sluiced's "
			    "--beanstalk port?");
			return;
		}
	}
	snprintf(
	    out, cap, "something answers there, but not as a sluice server");
}

int
probe_peer(const char *url, int budget_ms, char *out, size_t cap)
{
	static const char req[] = "GET / HTTP/1.0\r\n\r\n";
	struct addrinfo hints = { 0 }, *res = NULL;
	long long deadline = mono_ms() + budget_ms;
	unsigned char b[64];
	nng_url *u = NULL;
	int fd = -1, rc = -1, err = 0;
	socklen_t len = sizeof(err);
	size_t n;

	if (nng_url_parse(&u, url) != 0)
		return -1;
	if (strncmp(u->u_scheme, "tcp", 3) != 0 || u->u_port[0] == '\0')
		goto done;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (getaddrinfo(u->u_hostname[0] ? u->u_hostname : NULL, u->u_port,
	        &hints, &res) != 0)
		goto done;
	fd = socket(
	    res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		goto done;
	if (connect(fd, res->ai_addr, res->ai_addrlen) != 0 &&
	    errno != EINPROGRESS) {
		err = errno;
	} else if (!wait_fd(fd, POLLOUT, deadline - mono_ms())) {
		snprintf(
		    out, cap, "no connection accepted within %d ms", budget_ms);
		rc = 0;
		goto done;
	} else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
		err = errno;
	}
	if (err != 0) {
		if (err == ECONNREFUSED)
			snprintf(out, cap, "nothing listens there");
		else
			snprintf(out, cap, "%s", strerror(err));
		rc = 0;
		goto done;
	}
	/* an nng peer speaks first: its 8-byte header */
	n = read_some(fd, b, sizeof(b), mono_ms() + PROBE_QUIET_MS);
	if (n == 0 && write(fd, req, sizeof(req) - 1) > 0)
		n = read_some(fd, b, sizeof(b), deadline);
	if (n > 0) {
		classify(b, n, out, cap);
		rc = 0;
	}

done:
	if (fd >= 0)
		close(fd);
	if (res != NULL)
		freeaddrinfo(res);
	nng_url_free(u);
	return rc;
}
