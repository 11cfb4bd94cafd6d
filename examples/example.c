/* example - put a task, take it, ack it: the smallest complete use of
 * libsluice. Build against an installed library with
 *
 *     cc example.c $(pkg-config --cflags --libs sluice) -o example
 *
 * and run it with a server listening (sluiced, or `make run`):
 *
 *     ./example [tcp://127.0.0.1:7711]
 */
#include <inttypes.h>
#include <stdio.h>

#include <sluice.h>

/* Prints what failed: the error's name and the library's detail. */
static int
fail(struct sluice_client *c, const char *what, int rc)
{
	fprintf(stderr, "%s: %s (%s)\n", what, sluice_strerror(rc),
	    sluice_errmsg(c));
	return 1;
}

int
main(int argc, char **argv)
{
	struct sluice_client *c;
	struct sluice_put_opts opts;
	struct sluice_take_opts take = { .wait_ms = 5000 };
	struct sluice_task *tasks;
	const char *tube[] = { "example" };
	uint64_t id;
	size_t n;
	int rc;

	/* 1. A handle; it connects on the first call. */
	if ((rc = sluice_open(argc > 1 ? argv[1] : NULL, &c)) != 0) {
		fprintf(stderr, "open: %s\n", sluice_strerror(rc));
		return 1;
	}

	/* 2. Put a task into the tube "example". */
	sluice_put_opts_init(&opts);
	opts.tube = tube[0];
	opts.ttr_ms = 30000; /* the taker has 30 s before it is retried */
	if ((rc = sluice_put(c, &opts, "hello", 5, &id, NULL)) != 0)
		return fail(c, "put", rc);
	printf("put task %" PRIu64 "\n", id);

	/* 3. Take a task from that tube, waiting up to 5 s for one. */
	take.tubes = tube;
	take.ntubes = 1;
	if ((rc = sluice_take(c, &take, &tasks, &n)) != 0)
		return fail(c, "take", rc);
	printf("took task %" PRIu64 " (lease %" PRIu64 "): %.*s\n", tasks[0].id,
	    tasks[0].lease, (int)tasks[0].payload_len,
	    (const char *)tasks[0].payload);

	/* 4. Work on it, then ack it with the lease the take returned. */
	if ((rc = sluice_ack(c, tasks[0].id, tasks[0].lease, NULL, NULL)) != 0)
		return fail(c, "ack", rc);
	printf("acked task %" PRIu64 "\n", tasks[0].id);

	sluice_task_free(tasks);
	sluice_close(c);
	return 0;
}
