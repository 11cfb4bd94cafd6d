/* bench_result - what every driver does with its connections' tallies:
 * add them up, and check that the counts add up; and the server's CPU
 * time around the run. */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "bench_run.h"

void
bench_tally_init(struct bench_tally *t)
{
	t->puts = t->take_acks = t->empty = t->requests = 0;
	bench_hist_init(&t->lat_put);
	bench_hist_init(&t->lat_take);
}

void
bench_result_add(struct bench_result *r, const struct bench_tally *t)
{
	r->puts += t->puts;
	r->take_acks += t->take_acks;
	r->empty_takes += t->empty;
	r->requests += t->requests;
	bench_hist_merge(&r->lat_put, &t->lat_put);
	bench_hist_merge(&r->lat_take, &t->lat_take);
	r->ops = r->puts + r->take_acks;
}

int
bench_check_puts(const struct bench_opts *o, const struct bench_result *r)
{
	if (o->workload == BENCH_PUT && o->duration_ms == 0 &&
	    r->puts != o->tasks) {
		bench_error("put %llu tasks, expected %llu",
		    (unsigned long long)r->puts, (unsigned long long)o->tasks);
		return -1;
	}
	return 0;
}

int
bench_check_drain(
    const struct bench_opts *o, const struct bench_result *r, const char *unit)
{
	/* All of them; with --duration, all but those left. */
	if (r->take_acks + (uint64_t)r->left != o->tasks ||
	    (o->duration_ms == 0 && r->left != 0)) {
		bench_error(
		    "drained %llu of %llu %s; the tube still holds %lld",
		    (unsigned long long)r->take_acks,
		    (unsigned long long)o->tasks, unit, r->left);
		return -1;
	}
	return 0;
}

int
bench_check_start(
    const struct bench_opts *o, long long before, struct bench_result *r)
{
	if (o->workload == BENCH_DRAIN && before != 0) {
		bench_error("tube %s already holds %lld tasks: drain needs an "
		            "empty tube (use another --tube)",
		    o->tube, before);
		return -1;
	}
	r->preloaded = o->workload == BENCH_DRAIN ? o->tasks
	    : o->workload == BENCH_MIXED          ? o->preload
	                                          : 0;
	return 0;
}

/* utime + stime of /proc/PID/stat (fields 14 and 15, after the command
 * name in parentheses, which may itself hold spaces), in ns; -1. */
static int64_t
proc_stat_cpu_ns(int pid)
{
	unsigned long long ut, st;
	char path[64], line[1024], *p;
	long tck = sysconf(_SC_CLK_TCK);
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (tck <= 0 || (f = fopen(path, "r")) == NULL)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (p == NULL || (p = strrchr(line, ')')) == NULL)
		return -1;
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt
	 * cmajflt utime stime */
	n = sscanf(p + 1,
	    " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
	if (n != 2)
		return -1;
	return (int64_t)((ut + st) * (1000000000ULL / (unsigned long long)tck));
}

int64_t
bench_server_cpu_ns(const struct bench_opts *o)
{
	struct timespec ts;
	clockid_t clk;

	if (o->server_pid <= 0)
		return -1;
	if (clock_getcpuclockid((pid_t)o->server_pid, &clk) == 0 &&
	    clock_gettime(clk, &ts) == 0)
		return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return proc_stat_cpu_ns(o->server_pid);
}

int64_t
bench_self_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
bench_result_cpu(struct bench_result *r, const struct bench_opts *o,
    int64_t before, int64_t self_before)
{
	int64_t after = bench_server_cpu_ns(o), self = bench_self_cpu_ns();

	r->server_cpu_ns = before >= 0 && after >= before ? after - before : -1;
	r->client_cpu_ns =
	    self_before >= 0 && self >= self_before ? self - self_before : -1;
}
