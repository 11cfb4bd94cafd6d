/* it_http - see it_http.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "it.h"
#include "it_http.h"

static int
dial(int port)
{
	struct sockaddr_in a = { 0 };
	struct timeval tv = { IT_HTTP_MS / 1000, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool
send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* Why the last it_http returned -1 (for the failure messages). */
static __thread char why[128];
/* The status line and headers of the last answer (for it_http_head). */
static __thread char last_head[4096];

int
it_http(int port, const char *method, const char *path, const char *headers,
    const char *body, char **out)
{
	size_t blen = body ? strlen(body) : 0, len = 0, cap = 8192;
	char *head = NULL, *buf = malloc(cap), *p;
	int64_t deadline = it_mono_ms() + IT_HTTP_MS;
	long clen = -1;
	int fd, status = -1;

	*out = NULL;
	last_head[0] = '\0';
	snprintf(why, sizeof(why), "?");
	if (buf == NULL || (fd = dial(port)) < 0) {
		snprintf(why, sizeof(why), "connect: %s", strerror(errno));
		free(buf);
		return -1;
	}
	if (asprintf(&head,
	        "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: "
	        "close\r\n%sContent-Type: application/json\r\n"
	        "Content-Length: %zu\r\n\r\n",
	        method, path, port, headers ? headers : "", blen) < 0)
		head = NULL;
	if (head == NULL || !send_all(fd, head, strlen(head)) ||
	    (body && !send_all(fd, body, blen))) {
		snprintf(why, sizeof(why), "send: %s", strerror(errno));
		goto done;
	}
	/* Read to the end, or to Content-Length (some servers keep the
	 * connection despite "close"). */
	for (;;) {
		ssize_t r;
		char *end;

		if (len + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (nb == NULL)
				goto done;
			buf = nb;
			cap *= 2;
		}
		buf[len] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (end != NULL && clen < 0) {
			char *cl = strcasestr(buf, "\r\ncontent-length:");

			if (cl != NULL && cl < end)
				clen = strtol(cl + 17, NULL, 10);
		}
		if (end != NULL && clen >= 0 &&
		    len >= (size_t)(end + 4 - buf) + (size_t)clen)
			break;
		if (it_mono_ms() > deadline) {
			snprintf(why, sizeof(why),
			    "no full answer in %d ms "
			    "(%zu bytes)",
			    IT_HTTP_MS, len);
			goto done;
		}
		r = recv(fd, buf + len, cap - 1 - len, 0);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			snprintf(why, sizeof(why), "recv after %zu bytes: %s",
			    len, strerror(errno));
			goto done;
		}
		len += (size_t)r;
	}
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1 ||
	    (p = strstr(buf, "\r\n\r\n")) == NULL) {
		snprintf(
		    why, sizeof(why), "not HTTP (%zu bytes): %.60s", len, buf);
		status = -1;
		goto done;
	}
	snprintf(last_head, sizeof(last_head), "%.*s", (int)(p + 2 - buf), buf);
	*out = strdup(p + 4);
	if (*out == NULL)
		status = -1;
done:
	close(fd);
	free(head);
	free(buf);
	return status;
}

const char *
it_http_head(void)
{
	return last_head;
}

char *
it_http_get(int port, const char *path, int want)
{
	char *body = NULL;
	int st = it_http(port, "GET", path, NULL, NULL, &body);

	if (st != want)
		fail_msg("GET %s: status %d, wanted %d: %s", path, st, want,
		    body ? body : why);
	return body;
}

double
it_metric(const char *text, const char *series)
{
	size_t n = strlen(series);

	for (const char *p = text; p != NULL && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	}
	fail_msg("no sample %s in the metrics", series);
	return 0;
}

double
it_json_num(const char *json, const char *scope, const char *key)
{
	char pat[256];
	const char *p = json;

	if (scope != NULL) {
		snprintf(pat, sizeof(pat), "\"%s\":", scope);
		p = strstr(json, pat);
		if (p == NULL)
			fail_msg("no \"%s\" in %s", scope, json);
	}
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(p, pat);
	if (p == NULL)
		fail_msg("no \"%s\" after \"%s\" in %s", key,
		    scope ? scope : "", json);
	return strtod(p + strlen(pat), NULL);
}

bool
it_json_str(const char *json, const char *key, char *out, size_t cap)
{
	char pat[256];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	if ((p = strstr(json, pat)) == NULL)
		return false;
	p += strlen(pat);
	if ((e = strchr(p, '"')) == NULL || (size_t)(e - p) >= cap)
		return false;
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return true;
}

int
it_free_port(void)
{
	return t_free_port();
}

bool
it_which(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH");
	char dirs[4096];

	snprintf(dirs, sizeof(dirs), "%s:/usr/sbin:/usr/bin", path ? path : "");
	for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d != NULL;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(out, cap, "%s/%s", d, name);
		if (access(out, X_OK) == 0)
			return true;
	}
	return false;
}
