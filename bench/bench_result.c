/* bench_result - what both drivers do with their connections' tallies:
 * add them up, and check that the counts add up. */
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
