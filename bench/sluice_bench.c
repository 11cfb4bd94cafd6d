/* sluice-bench - closed-loop client workloads (put, drain, mixed) against
 * sluiced, beanstalkd or Redis, so they can be compared in one run (see
 * bench/compare.sh and docs/benchmarks.md).
 *
 * This file is the front: it parses the command line, hands the run to the
 * driver of the target (bench_sluice.c, bench_libsluice.c, bench_tcp.c
 * with the dialect of bench_beanstalk.c or bench_redis.c) and prints what
 * it measured: a readable report, and with --json one JSON line last.
 * What an "op" is: put, one task put (with --batch the latency is per
 * request, a batch); drain, one take + ack (beanstalkd: reserve + delete;
 * Redis: XREADGROUP, then XACK + XDEL); mixed, either of the two. With
 * --server-pid, the server's CPU time over the run is divided by the
 * ops. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "bench_tcp.h"

void
bench_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sluice-bench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double
us(uint64_t ns)
{
	return (double)ns / 1000.0;
}

/* "850 us" or "1.23 ms" */
static const char *
fmt_lat(char *s, size_t n, uint64_t ns)
{
	if (ns < 1000000)
		snprintf(s, n, "%.0f us", us(ns));
	else
		snprintf(s, n, "%.2f ms", (double)ns / 1e6);
	return s;
}

static void
print_lat(const char *what, const struct bench_hist *h)
{
	char a[32], b[32], c[32], d[32], e[32];

	if (h->count == 0) {
		printf("  %s: no samples\n", what);
		return;
	}
	printf("  %s: p50 %s, p99 %s, p99.9 %s, max %s, mean %s\n", what,
	    fmt_lat(a, sizeof(a), bench_hist_percentile(h, 50)),
	    fmt_lat(b, sizeof(b), bench_hist_percentile(h, 99)),
	    fmt_lat(c, sizeof(c), bench_hist_percentile(h, 99.9)),
	    fmt_lat(d, sizeof(d), h->max),
	    fmt_lat(e, sizeof(e), (uint64_t)bench_hist_mean(h)));
}

static double
rate(uint64_t n, double s)
{
	return s > 0 ? (double)n / s : 0.0;
}

static void
report(const struct bench_opts *o, const struct bench_result *r)
{
	const char *take = o->target == BENCH_BEANSTALKD
	    ? "reserve-with-timeout 0 + delete"
	    : o->target == BENCH_REDIS ? "XREADGROUP + XACK + XDEL"
	    : o->target == BENCH_HTTP  ? "POST take + POST ack"
	                               : "take + ack";
	double cpu_us = r->server_cpu_ns >= 0 && r->ops > 0
	    ? (double)r->server_cpu_ns / 1000.0 / (double)r->ops
	    : -1.0;
	double ccpu_us = r->client_cpu_ns >= 0 && r->ops > 0
	    ? (double)r->client_cpu_ns / 1000.0 / (double)r->ops
	    : -1.0;
	struct bench_hist all;

	bench_hist_init(&all);
	bench_hist_merge(&all, &r->lat_put);
	bench_hist_merge(&all, &r->lat_take);

	printf("sluice-bench: %s at %s, %s, %u connection%s, %zu-byte "
	       "payloads\n",
	    bench_target_name(o->target), o->url,
	    bench_workload_name(o->workload), o->conns,
	    o->conns == 1 ? "" : "s", o->bytes);
	if (r->preloaded)
		printf("  preloaded %llu tasks in %.2f s (not timed)\n",
		    (unsigned long long)r->preloaded, r->preload_s);
	switch (o->workload) {
	case BENCH_PUT:
		printf("  put %llu tasks in %.3f s: %.1f ops/s (1 op = 1 task "
		       "put)\n",
		    (unsigned long long)r->puts, r->seconds,
		    rate(r->puts, r->seconds));
		if (o->batch > 1)
			printf("  %s of %u: %llu requests, %.1f requests/s; "
			       "latency per batch\n",
			    o->target == BENCH_SLUICE ||
			            o->target == BENCH_LIBSLUICE
			        ? "batch puts"
			        : "pipelined puts (no batch put there), "
			          "groups",
			    o->batch, (unsigned long long)r->requests,
			    rate(r->requests, r->seconds));
		print_lat(o->batch > 1 ? "latency per batch" : "latency per op",
		    &r->lat_put);
		break;
	case BENCH_DRAIN:
		printf("  drained %llu tasks in %.3f s: %.1f ops/s (1 op = 1 "
		       "%s); %lld left in the tube\n",
		    (unsigned long long)r->take_acks, r->seconds,
		    rate(r->take_acks, r->seconds), take, r->left);
		print_lat("latency per op", &r->lat_take);
		break;
	case BENCH_MIXED:
		printf("  %.3f s: %.1f ops/s (1 op = 1 put or 1 %s)\n",
		    r->seconds, rate(r->ops, r->seconds), take);
		printf("  %llu puts (%.1f/s), %llu take + ack (%.1f/s), %llu "
		       "takes found the tube empty\n",
		    (unsigned long long)r->puts, rate(r->puts, r->seconds),
		    (unsigned long long)r->take_acks,
		    rate(r->take_acks, r->seconds),
		    (unsigned long long)r->empty_takes);
		print_lat("latency per op", &all);
		print_lat("  put", &r->lat_put);
		print_lat("  take + ack", &r->lat_take);
		break;
	}
	if (r->server_cpu_ns >= 0)
		printf("  server (pid %d) CPU: %.3f s, %.1f us per op\n",
		    o->server_pid, (double)r->server_cpu_ns / 1e9, cpu_us);
	if (r->client_cpu_ns >= 0)
		printf("  client (this process) CPU: %.3f s, %.1f us per op\n",
		    (double)r->client_cpu_ns / 1e9, ccpu_us);
	if (!o->json)
		return;

	/* One line, last, for scripts: the same figures. */
	printf("{\"target\":\"%s\",\"workload\":\"%s\",\"conns\":%u,"
	       "\"tasks\":%llu,\"bytes\":%zu,\"batch\":%u,"
	       "\"op\":\"%s\",\"ops\":%llu,\"seconds\":%.3f,"
	       "\"ops_per_sec\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f,"
	       "\"p999_us\":%.1f,\"max_us\":%.1f,\"mean_us\":%.1f,"
	       "\"requests\":%llu,\"puts\":%llu,\"take_acks\":%llu,"
	       "\"put_p99_us\":%.1f,\"take_ack_p99_us\":%.1f,"
	       "\"empty_takes\":%llu,\"preloaded\":%llu,\"preload_sec\":%.3f,"
	       "\"left\":%lld,\"server_cpu_sec\":%.4f,"
	       "\"server_cpu_us_per_op\":%.2f,"
	       "\"client_cpu_us_per_op\":%.2f,\"tube\":\"%s\"}\n",
	    bench_target_name(o->target), bench_workload_name(o->workload),
	    o->conns,
	    (unsigned long long)(o->workload == BENCH_MIXED ? r->preloaded
	                                                    : o->tasks),
	    o->bytes, o->batch,
	    o->workload == BENCH_PUT
	        ? (o->batch > 1 ? "put (latency per batch)" : "put")
	        : o->workload == BENCH_DRAIN ? "take+ack"
	                                     : "put|take+ack",
	    (unsigned long long)r->ops, r->seconds, rate(r->ops, r->seconds),
	    us(bench_hist_percentile(&all, 50)),
	    us(bench_hist_percentile(&all, 99)),
	    us(bench_hist_percentile(&all, 99.9)), us(all.max),
	    bench_hist_mean(&all) / 1000.0, (unsigned long long)r->requests,
	    (unsigned long long)r->puts, (unsigned long long)r->take_acks,
	    us(bench_hist_percentile(&r->lat_put, 99)),
	    us(bench_hist_percentile(&r->lat_take, 99)),
	    (unsigned long long)r->empty_takes,
	    (unsigned long long)r->preloaded, r->preload_s, r->left,
	    r->server_cpu_ns >= 0 ? (double)r->server_cpu_ns / 1e9 : -1.0,
	    cpu_us, ccpu_us, o->tube);
}

int
main(int argc, char **argv)
{
	struct bench_result *r;
	struct bench_opts o;
	char err[256];
	int rc;

	rc = bench_opts_parse(&o, argc, argv, err, sizeof(err));
	if (rc == 1) {
		bench_opts_usage(stdout);
		return 0;
	}
	if (rc != 0) {
		bench_error("%s (--help tells the usage)", err);
		return 2;
	}
	/* Three histograms of ~30 KiB: not on the stack. */
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		bench_error("out of memory");
		return 1;
	}
	bench_hist_init(&r->lat_put);
	bench_hist_init(&r->lat_take);
	r->left = -1;
	r->server_cpu_ns = -1;
	r->client_cpu_ns = -1;
	if (o.server_pid > 0 && bench_server_cpu_ns(&o) < 0) {
		bench_error("--server-pid %d: cannot read its CPU time (no "
		            "such process?)",
		    o.server_pid);
		free(r);
		return 1;
	}
	switch (o.target) {
	case BENCH_SLUICE:
		rc = bench_sluice_run(&o, r);
		break;
	case BENCH_LIBSLUICE:
		rc = bench_libsluice_run(&o, r);
		break;
	case BENCH_BEANSTALKD:
		rc = bench_tcp_run(&bench_beanstalk_dialect, &o, r);
		break;
	case BENCH_REDIS:
		rc = bench_tcp_run(&bench_redis_dialect, &o, r);
		break;
	case BENCH_HTTP:
		rc = bench_tcp_run(&bench_http_dialect, &o, r);
		break;
	default:
		rc = -1;
		break;
	}
	if (rc != 0) {
		free(r);
		return 1;
	}
	report(&o, r);
	free(r);
	return 0;
}
