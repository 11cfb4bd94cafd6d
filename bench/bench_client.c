/* bench_client - what the benchmarks against a running sluiced share
 * (bench_client.h). */
#include "bench_client.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/clock.h"

enum { BENCH_BATCH = 500 };

double
bench_mono_s(void)
{
	return (double)clock_mono_ns() / 1e9;
}

struct sluice_client *
bench_connect(const char *prog, const char *url)
{
	struct sluice_client *c = NULL;
	int rc = sluice_open(url, &c);

	if (rc != 0) {
		fprintf(stderr, "%s: connect %s: %s\n", prog, url,
		    sluice_strerror(rc));
		exit(1);
	}
	return c;
}

void
bench_put_n(const char *prog, struct sluice_client *c, const char *tube,
    uint64_t n, uint32_t groups)
{
	static struct sluice_batch_item items[BENCH_BATCH];
	static char names[BENCH_BATCH][16];
	static const char payload[100];

	for (uint64_t done = 0; done < n;) {
		size_t k =
		    n - done < BENCH_BATCH ? (size_t)(n - done) : BENCH_BATCH;
		int rc;

		memset(items, 0, sizeof(items));
		for (size_t i = 0; i < k; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = tube;
			if (groups > 0) {
				snprintf(names[i], sizeof(names[i]),
				    "g%" PRIu64, (done + i) % groups);
				items[i].opts.group = names[i];
			}
			items[i].payload = payload;
			items[i].len = sizeof(payload);
		}
		if ((rc = sluice_put_batch(c, items, k)) != 0) {
			fprintf(
			    stderr, "%s: put: %s\n", prog, sluice_strerror(rc));
			exit(1);
		}
		done += k;
	}
}
