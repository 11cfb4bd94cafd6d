/* read-probe - how long the requests that need no new durability take
 * while a running sluiced is under load: a take, a peek, a tube's stats
 * and GET /metrics, each from a thread of its own, one request every
 * --gap-us, for --secs. Prints one JSON line per kind: its count and its
 * latency's p50, p99 and max in µs. bench/slowdisk.sh runs it beside a
 * 32-client mixed load on a server whose every flush is late.
 *
 * Design. Before the clock starts, --preload tasks are put into the
 * probe's own tube (`probe`, one batch of 500 after another), so that the
 * takes never find it empty and the peeks have a task to read; nothing
 * the probe does writes to the tubes the load uses. A take is answered
 * once the records its task depends on are durable (its put's, done
 * before the clock starts), not after the load's commit in flight; its
 * task is never acked (an ack waits for the disk). GET /metrics goes over
 * one keep-alive HTTP/1.1 connection of its own to --http. Any failed
 * request ends the program (exit 1): a probe that lost its server has
 * nothing to report. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_client.h"
#include "bench_hist.h"
#include "sluice.h"
#include "util/clock.h"

#define PROG "read-probe"
#define TUBE "probe"

enum kind { K_TAKE, K_PEEK, K_STATS, K_METRICS, K_COUNT };

static const char *const kind_names[K_COUNT] = { "take", "peek", "stats",
	"metrics" };

static struct {
	const char *url;
	const char *http; /* HOST:PORT, or NULL: no /metrics */
	double secs;
	int64_t gap_ns;
	uint64_t preload;
	uint64_t peek_id;
} cfg = { "tcp://127.0.0.1:7711", NULL, 5.0, 2000000, 0, 0 };

struct prober {
	enum kind kind;
	pthread_t thread;
	struct bench_hist hist;
};

static void
die(const char *what, const char *why)
{
	fprintf(stderr, PROG ": %s: %s\n", what, why);
	exit(1);
}

/* A connection to cfg.http (HOST:PORT, an IPv4 address). */
static int
http_connect(void)
{
	char host[64];
	const char *colon = strrchr(cfg.http, ':');
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd, one = 1;

	if (colon == NULL || (size_t)(colon - cfg.http) >= sizeof(host))
		die("--http", "not HOST:PORT");
	memcpy(host, cfg.http, (size_t)(colon - cfg.http));
	host[colon - cfg.http] = '\0';
	a.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		die("--http", "not an IPv4 address");
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect --http", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* One GET /metrics on `fd`, its whole response read (a 200 with a
 * Content-Length). `buf` holds what the response needs. */
static void
http_metrics(int fd, char *buf, size_t cap)
{
	char req[128];
	int rl = snprintf(req, sizeof(req),
	    "GET /metrics HTTP/1.1\r\nHost: %s\r\n\r\n", cfg.http);
	size_t len = 0, need = 0;

	if (send(fd, req, (size_t)rl, MSG_NOSIGNAL) != rl)
		die("GET /metrics", strerror(errno));
	for (;;) {
		ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);

		if (r <= 0)
			die("GET /metrics",
			    r == 0 ? "closed" : strerror(errno));
		len += (size_t)r;
		buf[len] = '\0';
		if (need == 0) {
			char *end = strstr(buf, "\r\n\r\n");
			char *cl = strcasestr(buf, "\r\nContent-Length:");

			if (end == NULL)
				continue;
			if (strncmp(buf, "HTTP/1.1 200", 12) != 0 || cl == NULL)
				die("GET /metrics", "not a 200 with a length");
			need = (size_t)(end + 4 - buf) +
			    strtoull(cl + 17, NULL, 10);
			if (need >= cap)
				die("GET /metrics", "response too large");
		}
		if (len >= need)
			return; /* nothing pipelined: nothing follows */
	}
}

static void *
probe(void *arg)
{
	struct prober *p = arg;
	struct sluice_client *c = NULL;
	const char *tubes[] = { TUBE };
	struct sluice_take_opts take = { tubes, 1, 0, 1, 0, 0, 0 };
	enum { BODY_MAX = 1 << 20 };
	char *body = NULL;
	int fd = -1;
	int64_t end = clock_mono_ns() + (int64_t)(cfg.secs * 1e9);

	if (p->kind == K_METRICS) {
		fd = http_connect();
		if ((body = malloc(BODY_MAX)) == NULL)
			die("metrics", "out of memory");
	} else
		c = bench_connect(PROG, cfg.url);
	while (clock_mono_ns() < end) {
		int64_t t0 = clock_mono_ns();
		struct sluice_task *t = NULL;
		struct sluice_stats *st = NULL;
		size_t n = 0;
		int rc = 0;

		switch (p->kind) {
		case K_TAKE:
			rc = sluice_take(c, &take, &t, &n);
			if (rc == 0 && n == 0)
				die("take", "the probe's tube ran out");
			sluice_task_free(t);
			break;
		case K_PEEK:
			rc = sluice_peek(c, cfg.peek_id, &t);
			sluice_task_free(t);
			break;
		case K_STATS:
			rc = sluice_stats(c, TUBE, &st);
			sluice_stats_free(st);
			break;
		case K_METRICS:
			http_metrics(fd, body, BODY_MAX);
			break;
		case K_COUNT:
			break;
		}
		if (rc != 0)
			die(kind_names[p->kind], sluice_strerror(rc));
		bench_hist_record(&p->hist, (uint64_t)(clock_mono_ns() - t0));
		int64_t next = t0 + cfg.gap_ns, now = clock_mono_ns();

		if (next > now)
			usleep((useconds_t)((next - now) / 1000));
	}
	if (c != NULL)
		sluice_close(c);
	if (fd >= 0)
		close(fd);
	free(body);
	return NULL;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: read-probe [--url URL] [--http HOST:PORT] [--secs S]\n"
	    "    [--gap-us US] [--preload N]\n"
	    "  --url      sluiced (default tcp://127.0.0.1:7711)\n"
	    "  --http     its --http address, for GET /metrics (none: not "
	    "probed)\n"
	    "  --secs     how long (default 5)\n"
	    "  --gap-us   each prober's pause between requests (default "
	    "2000)\n"
	    "  --preload  tasks put into the tube `probe` first (default: "
	    "the takes' need, with room to spare)\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct prober pr[K_COUNT];
	int nk = 0;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v == NULL)
			usage();
		if (strcmp(argv[i], "--url") == 0)
			cfg.url = v;
		else if (strcmp(argv[i], "--http") == 0)
			cfg.http = v;
		else if (strcmp(argv[i], "--secs") == 0)
			cfg.secs = atof(v);
		else if (strcmp(argv[i], "--gap-us") == 0)
			cfg.gap_ns = atoll(v) * 1000;
		else if (strcmp(argv[i], "--preload") == 0)
			cfg.preload = strtoull(v, NULL, 10);
		else
			usage();
		i++;
	}
	if (cfg.secs <= 0 || cfg.gap_ns <= 0)
		usage();
	if (cfg.preload == 0)
		cfg.preload =
		    (uint64_t)(cfg.secs * 1e9 / (double)cfg.gap_ns) + 1000;

	struct sluice_client *c = bench_connect(PROG, cfg.url);
	struct sluice_put_opts o;
	uint64_t id = 0;
	int rc;

	/* the peeked task first: the takes take the smallest ids first,
	 * and a peek of a taken task reads just as well */
	sluice_put_opts_init(&o);
	o.tube = TUBE;
	if ((rc = sluice_put(c, &o, "peeked", 6, &id, NULL)) != 0)
		die("put", sluice_strerror(rc));
	cfg.peek_id = id;
	bench_put_n(PROG, c, TUBE, cfg.preload, 0);
	sluice_close(c);

	for (int k = 0; k < K_COUNT; k++) {
		if (k == K_METRICS && cfg.http == NULL)
			continue;
		pr[nk].kind = (enum kind)k;
		bench_hist_init(&pr[nk].hist);
		if (pthread_create(&pr[nk].thread, NULL, probe, &pr[nk]) != 0)
			die("thread", strerror(errno));
		nk++;
	}
	for (int i = 0; i < nk; i++) {
		const struct bench_hist *h = &pr[i].hist;

		pthread_join(pr[i].thread, NULL);
		printf("{\"probe\":\"%s\",\"count\":%" PRIu64
		       ",\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f}\n",
		    kind_names[pr[i].kind], h->count,
		    (double)bench_hist_percentile(h, 50) / 1000.0,
		    (double)bench_hist_percentile(h, 99) / 1000.0,
		    (double)(h->count ? h->max : 0) / 1000.0);
	}
	return 0;
}
