/* it_probe - see it_probe.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it.h"
#include "it_probe.h"

static void
probe_error(struct it_probe *p, const char *what, int rc)
{
	if (p->errors++ == 0)
		snprintf(p->first_error, sizeof(p->first_error), "%s: %s", what,
		    sluice_strerror(rc));
}

static void
probe_time(struct it_probe *p, int64_t t0_us)
{
	struct timespec ts;
	int64_t now;

	if (!atomic_load(&p->ready))
		return; /* the first round, before it_probe_start returns */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	if (p->n < IT_PROBE_MAX_CALLS)
		p->us[p->n++] = (uint32_t)(now - t0_us);
}

static void *probe_main(void *arg);

void
it_probe_spawn(struct it_probe *p, const char *url, const char *tube,
    const char *token, const char *ca)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->url, sizeof(p->url), "%s", url);
	snprintf(p->tube, sizeof(p->tube), "%s", tube);
	snprintf(p->token, sizeof(p->token), "%s", token != NULL ? token : "");
	snprintf(p->ca, sizeof(p->ca), "%s", ca != NULL ? ca : "");
	p->us = calloc(IT_PROBE_MAX_CALLS, sizeof(*p->us));
	assert_non_null(p->us);
	atomic_init(&p->stop, false);
	atomic_init(&p->ready, false);
	atomic_init(&p->warm, false);
	p->spawned_ms = it_mono_ms();
	assert_int_equal(pthread_create(&p->thread, NULL, probe_main, p), 0);
}

void
it_probe_arm(struct it_probe *p)
{
	int64_t end = p->spawned_ms + IT_PROBE_WARM_MS;

	/* its connection made (and its token sent) by a first round that is
	 * not timed: each call timed from here is one a connected client
	 * makes, and the attack a test starts next finds it connected */
	while (!atomic_load(&p->warm) && it_mono_ms() < end)
		it_sleep_ms(5);
	p->t0_ms = it_mono_ms();
	atomic_store(&p->ready, true);
	fprintf(stderr, "probe on %s: connected, first round in %lld ms\n",
	    p->tube, (long long)(p->t0_ms - p->spawned_ms));
}

void
it_probe_start_tls(struct it_probe *p, const char *url, const char *tube,
    const char *token, const char *ca)
{
	it_probe_spawn(p, url, tube, token, ca);
	it_probe_arm(p);
}

static int64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* One round: put, take (no wait), ack; each call timed on its own. */
static void
probe_round(struct it_probe *p, struct sluice_client *c)
{
	struct sluice_put_opts o;
	struct sluice_take_opts to;
	struct sluice_task *tasks = NULL;
	size_t ntasks = 0;
	const char *tubes[] = { p->tube };
	uint64_t id;
	int64_t t0;
	int rc;

	sluice_put_opts_init(&o);
	o.tube = p->tube;
	t0 = now_us();
	rc = sluice_put(c, &o, "probe", 5, &id, NULL);
	probe_time(p, t0);
	if (rc != 0) {
		probe_error(p, "put", rc);
		return;
	}
	memset(&to, 0, sizeof(to));
	to.tubes = tubes;
	to.ntubes = 1;
	to.wait_ms = 0;
	to.max = 1;
	t0 = now_us();
	rc = sluice_take(c, &to, &tasks, &ntasks);
	probe_time(p, t0);
	if (rc != 0 || ntasks != 1) {
		probe_error(p, "take", rc != 0 ? rc : SLUICE_ENOTFOUND);
		sluice_task_free(tasks);
		return;
	}
	t0 = now_us();
	rc = sluice_ack(c, tasks[0].id, tasks[0].lease, NULL, NULL);
	probe_time(p, t0);
	if (rc != 0)
		probe_error(p, "ack", rc);
	sluice_task_free(tasks);
}

static void *
probe_main(void *arg)
{
	struct it_probe *p = arg;
	struct sluice_client *c = it_client_url(p->url);
	int64_t end = it_mono_ms() + IT_PROBE_MAX_MS;

	if (c == NULL) {
		probe_error(p, "connect", SLUICE_ECONN);
		atomic_store(&p->warm, true);
		return NULL;
	}
	if (p->ca[0] != '\0' && sluice_set_tls(c, p->ca, NULL, NULL) != 0)
		probe_error(p, "tls", SLUICE_EINVAL);
	if (p->token[0] != '\0' && sluice_set_token(c, p->token) != 0)
		probe_error(p, "token", SLUICE_EINVAL);
	probe_round(p, c); /* the first, not timed (it_probe_start) */
	atomic_store(&p->warm, true);
	while (!atomic_load(&p->ready) && it_mono_ms() < end)
		it_sleep_ms(1);
	while (!atomic_load(&p->stop) && p->n + 3 <= IT_PROBE_MAX_CALLS &&
	    it_mono_ms() < end) {
		probe_round(p, c);
		it_sleep_ms(IT_PROBE_PAUSE_MS);
	}
	sluice_close(c);
	return NULL;
}

void
it_probe_start(struct it_probe *p, const char *url, const char *tube)
{
	it_probe_start_tls(p, url, tube, NULL, NULL);
}

void
it_probe_start_token(
    struct it_probe *p, const char *url, const char *tube, const char *token)
{
	it_probe_start_tls(p, url, tube, token, NULL);
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct it_probe_result
it_probe_stop(struct it_probe *p, const char *what)
{
	struct it_probe_result r = { 0 };

	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	r.ms = it_mono_ms() - p->t0_ms;
	r.calls = p->n;
	r.errors = p->errors;
	if (p->n > 0) {
		qsort(p->us, p->n, sizeof(*p->us), cmp_u32);
		r.p50_ms = p->us[p->n / 2] / 1000.0;
		r.p99_ms = p->us[(p->n * 99) / 100] / 1000.0;
		r.max_ms = p->us[p->n - 1] / 1000.0;
	}
	fprintf(stderr,
	    "probe %s: %zu calls, %lu errors%s%s, p50 %.2f ms, p99 %.2f ms, "
	    "max %.2f ms\n",
	    what, r.calls, r.errors, r.errors ? " (first: " : "",
	    r.errors ? p->first_error : "", r.p50_ms, r.p99_ms, r.max_ms);
	if (r.errors)
		fprintf(stderr, ")\n");
	free(p->us);
	p->us = NULL;
	return r;
}

/* The line `field` (with its colon) of /proc/PID/status, in KiB; -1
 * when there is none. */
static long
it_status_kb(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t n = strlen(field);
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, n) == 0) {
			kb = strtol(line + n, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

long
it_rss_kb(pid_t pid)
{
	return it_status_kb(pid, "VmRSS:");
}

long
it_cpu_ms(pid_t pid)
{
	char path[64], buf[2048], *p;
	unsigned long ut, st;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the name's ")" (it may hold blanks): state(3) ... utime(14)
	 * stime(15) */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	        &ut, &st) != 2)
		return -1;
	return (long)((ut + st) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

long
it_hwm_kb(pid_t pid)
{
	return it_status_kb(pid, "VmHWM:");
}

long
it_fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	long n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}
