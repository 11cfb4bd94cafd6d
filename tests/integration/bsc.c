/* bsc - see bsc.h. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bsc.h"
#include "it.h"

int
bsc_open(struct bsc *c, int port)
{
	return bsc_open_within(c, port, 5000);
}

int
bsc_open_within(struct bsc *c, int port, int ms)
{
	struct sockaddr_in a;
	int64_t end = it_mono_ms() + ms;
	int one = 1;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	buf_init(&c->in);
	for (;;) {
		c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c->fd < 0)
			return -1;
		if (connect(c->fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			break;
		close(c->fd);
		c->fd = -1;
		if (it_mono_ms() >= end)
			return -1;
		it_sleep_ms(20);
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

void
bsc_close(struct bsc *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	buf_fini(&c->in);
}

int
bsc_send(struct bsc *c, const void *p, size_t len)
{
	const char *s = p;

	while (len > 0) {
		ssize_t n = send(c->fd, s, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

int
bsc_sends(struct bsc *c, const char *s)
{
	return bsc_send(c, s, strlen(s));
}

/* Reads what is there, waiting up to ms. 1 got bytes, 0 timeout, -1
 * closed. */
static int
fill(struct bsc *c, int ms)
{
	struct pollfd p = { c->fd, POLLIN, 0 };
	uint8_t *dst;
	ssize_t n;

	if (poll(&p, 1, ms < 0 ? 0 : ms) <= 0)
		return 0;
	if (!buf_reserve(&c->in, 65536))
		return -1;
	dst = c->in.data + c->in.len;
	n = recv(c->fd, dst, 65536, 0);
	if (n <= 0)
		return -1;
	c->in.len += (size_t)n;
	return 1;
}

/* The length of the first whole reply in c->in, or 0. */
static size_t
whole(const struct bsc *c)
{
	const char *p = (const char *)c->in.data;
	const char *eol = NULL;
	size_t len = c->in.len, line, body = 0;

	for (size_t i = 0; i + 1 < len; i++) {
		if (p[i] == '\r' && p[i + 1] == '\n') {
			eol = p + i;
			break;
		}
	}
	if (eol == NULL)
		return 0;
	line = (size_t)(eol - p) + 2;
	if (strncmp(p, "RESERVED ", 9) == 0 || strncmp(p, "FOUND ", 6) == 0 ||
	    strncmp(p, "OK ", 3) == 0) {
		const char *sp = eol;

		while (sp > p && sp[-1] != ' ')
			sp--;
		body = (size_t)strtoull(sp, NULL, 10) + 2;
	}
	return len >= line + body ? line + body : 0;
}

int
bsc_replies(struct bsc *c, int n, int timeout_ms, struct buf *out)
{
	int64_t end = it_mono_ms() + timeout_ms;
	int got = 0;

	while (got < n) {
		size_t w = whole(c);

		if (w > 0) {
			buf_put(out, c->in.data, w);
			memmove(c->in.data, c->in.data + w, c->in.len - w);
			c->in.len -= w;
			got++;
			continue;
		}
		if (it_mono_ms() >= end ||
		    fill(c, (int)(end - it_mono_ms())) < 0)
			break;
	}
	return got;
}

char *
bsc_reply(struct bsc *c)
{
	struct buf b;
	char *s;

	buf_init(&b);
	assert_int_equal(
	    bsc_replies(c, 1, (int)it_scale(10000, 1, 1) * 3, &b), 1);
	s = malloc(b.len + 1);
	assert_non_null(s);
	memcpy(s, b.data, b.len);
	s[b.len] = '\0';
	buf_fini(&b);
	return s;
}

char *
bsc_cmd(struct bsc *c, const char *cmd)
{
	assert_int_equal(bsc_sends(c, cmd), 0);
	return bsc_reply(c);
}

bool
bsc_quiet(struct bsc *c, int ms)
{
	return c->in.len == 0 && fill(c, ms) == 0;
}

bool
bsc_closed(struct bsc *c, int ms)
{
	int64_t end = it_mono_ms() + ms;

	while (it_mono_ms() < end) {
		int r = fill(c, (int)(end - it_mono_ms()));

		if (r < 0)
			return true;
	}
	return false;
}

int
bsc_beanstalkd(const char *const *extra, pid_t *pid)
{
	const char *bin = "/usr/bin/beanstalkd";
	char portarg[16];
	const char *argv[16];
	int port = t_free_port(), n = 0;
	struct bsc probe;

	if (access(bin, X_OK) != 0)
		return 0;
	snprintf(portarg, sizeof(portarg), "%d", port);
	argv[n++] = bin;
	argv[n++] = "-l";
	argv[n++] = "127.0.0.1";
	argv[n++] = "-p";
	argv[n++] = portarg;
	for (int i = 0; extra != NULL && extra[i] != NULL && n < 15; i++)
		argv[n++] = extra[i];
	argv[n] = NULL;
	*pid = fork();
	assert_true(*pid >= 0);
	if (*pid == 0) {
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	it_track_pid(*pid);
	assert_int_equal(bsc_open(&probe, port), 0);
	bsc_close(&probe);
	return port;
}

void
bsc_node_up(void **state, struct bsc_node *n)
{
	n->s = it_srv(*state, "node");
	n->port = t_free_port();
	snprintf(n->addr, sizeof(n->addr), "127.0.0.1:%d", n->port);
	n->s->args[0] = "--beanstalk";
	n->s->args[1] = n->addr;
	it_start(n->s);
	n->c = it_client(n->s);
}

void
bsc_node_down(struct bsc_node *n)
{
	sluice_close(n->c);
	assert_int_equal(t_srv_stop(n->s, SIGTERM), 0);
}
