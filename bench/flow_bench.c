/* flow-bench - what workflows cost, measured against a running sluiced
 * (bench/flow.sh starts one and writes docs/benchmarks.md). Two modes:
 *
 * Graphs (the default): G graphs of two-level fan-out, each a parent, F
 * children put after it and a join put after the F children (G * (F +
 * 2) tasks: 102,000 for the default 1,000 graphs of 100), against a
 * plain tube of the same number of tasks without parents.
 *
 * --batch N: N tasks (100,000 for flow.sh) put into one batch that
 * carries an on_success and an on_complete callback, closed once they
 * are all put, against N plain tasks. The batch's drain ends when its
 * callbacks are put (batch_show says ended, both fired), and each is
 * then checked: exactly one task in each callback's tube, its payload
 * the batch's counts (every task acked), and no second one.
 *
 * Either way --rounds times, alternating which goes first, each on a
 * tube of its own. Each run puts everything first (batches of up to
 * 500: the graphs' parents, then the children naming their parent's id,
 * then the joins naming their 100 children's ids), then W workers (a
 * thread and a libsluice handle each: take one task waiting up to 1 s,
 * ack it) drain the tube until every task is acked: the children become
 * ready as their parent is acked, a join when its last child is. The
 * put's and the drain's seconds are timed apart; the cost is the
 * workflow's total time (put + drain) over the plain one's, minus one,
 * of the medians (the goal: at most 20 %).
 *
 * Each take is checked: a task must carry as many parents as it was put
 * after (its payload says which it is: none for a plain task, a parent
 * or a batch's task, one for a child, F for a join), each acked
 * (outcome 1), none pending; a failure counts as an error, as does any
 * failed call or a callback missing or put twice. The output: a
 * readable report, and with --json one JSON line last.
 *
 * --server-pid PID: the server's CPU seconds (user + system, every
 * thread, /proc/PID/stat) of each run too, less sensitive to other load
 * than its wall time. --only plain|work: that kind alone (the other's
 * figures are 1s), for a server under valgrind that counts what one kind
 * costs in instructions (flow.sh --instructions). */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_client.h"
#include "sluice.h"
#include "util/clock.h"

enum { BATCH = 500, ROUNDS_MAX = 9, FANOUT_MAX = 1000 };

struct run {
	const char *url;
	const char *tube;
	uint64_t want;     /* stop after this many tasks */
	uint32_t fanout;   /* a join's parents; 0: plain tube */
	int64_t end;       /* monotonic ms: give up */
	atomic_ulong n;    /* tasks taken */
	atomic_int errors; /* failed calls */
	atomic_int early;  /* tasks taken with a parent not acked */
};

/* The payloads: 100 bytes, the first saying what the task is, so that a
 * take can check its parents: none for a plain task or a parent, one for
 * a child, the fan-out for a join. */
enum { PAYLOAD = 100 };
static char payloads[4][PAYLOAD];
enum role { R_PLAIN, R_PARENT, R_CHILD, R_JOIN };

/* What a run puts: plain tasks, the graphs, or one batch. */
enum kind { K_PLAIN, K_FLOW, K_BATCH };

/* Puts n tasks of `role` into `tube` (into the batch `batch` when not
 * NULL); task i after `nafter` ids from `after + first[i]` when after is
 * not NULL; their ids into `ids` (optional). */
static void
put_tasks(struct sluice_client *c, const char *tube, const char *batch,
    size_t n, enum role role, const uint64_t *after, const size_t *first,
    uint32_t nafter, uint64_t *ids)
{
	static struct sluice_batch_item items[BATCH];
	/* A join names up to FANOUT_MAX ids: keep a batch under the
	 * message limit. */
	size_t per = nafter > 10 ? 50 : BATCH;

	for (size_t done = 0; done < n;) {
		size_t k = n - done < per ? n - done : per;
		int rc;

		memset(items, 0, sizeof(items));
		for (size_t i = 0; i < k; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = tube;
			items[i].opts.batch = batch;
			if (after != NULL) {
				items[i].opts.after = after + first[done + i];
				items[i].opts.nafter = nafter;
			}
			items[i].payload = payloads[role];
			items[i].len = PAYLOAD;
		}
		if ((rc = sluice_put_batch(c, items, k)) != 0) {
			fprintf(stderr, "flow-bench: put: %s (%s)\n",
			    sluice_strerror(rc), sluice_errmsg(c));
			exit(1);
		}
		for (size_t i = 0; i < k; i++) {
			if (items[i].rc != 0) {
				fprintf(stderr, "flow-bench: put: %s (%s)\n",
				    sluice_strerror(items[i].rc),
				    items[i].errmsg);
				exit(1);
			}
			if (ids != NULL)
				ids[done + i] = items[i].id;
		}
		done += k;
	}
}

/* A graph tube: the parents, the children, the joins. */
static void
put_flow(
    struct sluice_client *c, const char *tube, uint32_t graphs, uint32_t fanout)
{
	size_t nc = (size_t)graphs * fanout;
	uint64_t *pid = calloc(graphs, sizeof(*pid));
	uint64_t *cid = calloc(nc, sizeof(*cid));
	size_t *first = calloc(nc, sizeof(*first));

	if (pid == NULL || cid == NULL || first == NULL) {
		fprintf(stderr, "flow-bench: out of memory\n");
		exit(1);
	}
	put_tasks(c, tube, NULL, graphs, R_PARENT, NULL, NULL, 0, pid);
	for (size_t i = 0; i < nc; i++)
		first[i] = i / fanout;
	put_tasks(c, tube, NULL, nc, R_CHILD, pid, first, 1, cid);
	for (size_t g = 0; g < graphs; g++)
		first[g] = g * fanout;
	put_tasks(c, tube, NULL, graphs, R_JOIN, cid, first, fanout, NULL);
	free(pid);
	free(cid);
	free(first);
}

/* A task taken: as many parents as its role gives it (none for a plain
 * task or a parent, one for a child, `fanout` for a join), each acked,
 * none pending. */
static bool
parents_done(const struct sluice_task *t, uint32_t fanout)
{
	static const uint32_t want[] = { 0, 0, 1, 0 };
	int role =
	    t->payload_len == PAYLOAD ? ((const char *)t->payload)[0] : -1;

	if (role < R_PLAIN || role > R_JOIN || t->parents_pending != 0)
		return false;
	if (t->nparents != (role == R_JOIN ? fanout : want[role]))
		return false;
	for (size_t i = 0; i < t->nparents; i++)
		if (t->parents[i].outcome != 1)
			return false;
	return true;
}

static void *
worker(void *arg)
{
	struct run *r = arg;
	struct sluice_client *c = bench_connect("flow-bench", r->url);
	const char *tubes[] = { r->tube };
	struct sluice_take_opts o = { tubes, 1, 1000, 1, 0, 0, 0 };

	while (clock_mono_ms() < r->end && atomic_load(&r->n) < r->want) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int rc = sluice_take(c, &o, &t, &n);

		if (rc == SLUICE_ETIMEDOUT)
			continue;
		if (rc != 0 || n != 1) {
			atomic_fetch_add(&r->errors, 1);
			sluice_task_free(t);
			continue;
		}
		atomic_fetch_add(&r->n, 1);
		if (!parents_done(&t[0], r->fanout))
			atomic_fetch_add(&r->early, 1);
		if (sluice_ack(c, t[0].id, t[0].lease, NULL, NULL) != 0)
			atomic_fetch_add(&r->errors, 1);
		sluice_task_free(t);
	}
	sluice_close(c);
	return NULL;
}

struct times {
	double put_s, drain_s;
	double cpu_s; /* the server's CPU seconds (user + system) */
};

static int server_pid; /* --server-pid: its CPU time is read; 0: not */

/* The CPU seconds of process `pid`, all its threads, user and system
 * (/proc/PID/stat's utime and stime); 0 when it cannot be read. */
static double
cpu_of(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;
	size_t n;

	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after "(comm)": state, then 10 fields before utime and stime */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	        &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The batch of a run on `tube`: named after it, its callbacks into
 * "TUBE.ok" (on_success) and "TUBE.done" (on_complete). */
static void
batch_names(const char *tube, char *ok, char *done, size_t cap)
{
	snprintf(ok, cap, "%s.ok", tube);
	snprintf(done, cap, "%s.done", tube);
}

static void
batch_open(struct sluice_client *c, const char *tube)
{
	char ok[64], done[64];
	struct sluice_batch_callback s = { ok, "s", 1 }, k = { done, "c", 1 };
	int rc;

	batch_names(tube, ok, done, sizeof(ok));
	if ((rc = sluice_batch_set(c, tube, &s, &k, 0, NULL)) != 0) {
		fprintf(stderr, "flow-bench: batch set %s: %s (%s)\n", tube,
		    sluice_strerror(rc), sluice_errmsg(c));
		exit(1);
	}
}

static void
batch_close(struct sluice_client *c, const char *tube)
{
	int rc = sluice_batch_set(c, tube, NULL, NULL, 1, NULL);

	if (rc != 0) {
		fprintf(stderr, "flow-bench: batch close %s: %s (%s)\n", tube,
		    sluice_strerror(rc), sluice_errmsg(c));
		exit(1);
	}
}

/* Waits (up to 60 s, polling each ms) until the batch of `tube` has
 * ended and put both callbacks; the errors found. */
static int
batch_wait_fired(struct sluice_client *c, const char *tube, uint64_t want)
{
	struct sluice_batch b;
	int64_t end = clock_mono_ms() + 60000;
	int rc;

	for (;;) {
		if ((rc = sluice_batch_show(c, tube, &b)) != 0) {
			fprintf(stderr, "flow-bench: batch show %s: %s\n", tube,
			    sluice_strerror(rc));
			return 1;
		}
		if (b.ended && b.success_id != 0 && b.complete_id != 0)
			break;
		if (clock_mono_ms() > end) {
			fprintf(stderr,
			    "flow-bench: batch %s: not ended with both "
			    "callbacks put after 60 s (ended %d, acked %" PRIu64
			    ")\n",
			    tube, b.ended, b.acked);
			return 1;
		}
		nanosleep(&(struct timespec) { 0, 1000000 }, NULL);
	}
	if (b.total != want || b.acked != want || b.failed != 0 ||
	    b.buried != 0) {
		fprintf(stderr,
		    "flow-bench: batch %s: total %" PRIu64 ", acked %" PRIu64
		    ", buried %" PRIu64 ", failed %" PRIu64 "; want %" PRIu64
		    " acked\n",
		    tube, b.total, b.acked, b.buried, b.failed, want);
		return 1;
	}
	return 0;
}

/* Takes every task of `cbtube` (until none comes for 200 ms): exactly
 * one, the batch's counts saying `want` acked, is right; the errors. */
static int
batch_check_callback(struct sluice_client *c, const char *cbtube,
    const char *event, uint64_t want)
{
	const char *tubes[] = { cbtube };
	struct sluice_take_opts o = { tubes, 1, 200, 1, 0, 0, 0 };
	char acked[64], ev[64];
	int found = 0, errors = 0;

	snprintf(acked, sizeof(acked), "\"acked\":%" PRIu64 ",", want);
	snprintf(ev, sizeof(ev), "\"event\":\"%s\"", event);
	for (int i = 0; i < 10; i++) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int rc = sluice_take(c, &o, &t, &n);
		char *pl;

		if (rc == SLUICE_ETIMEDOUT)
			break;
		if (rc != 0 || n != 1) {
			errors++;
			sluice_task_free(t);
			break;
		}
		found++;
		pl = strndup(t[0].payload, t[0].payload_len);
		if (pl == NULL || strstr(pl, acked) == NULL ||
		    strstr(pl, ev) == NULL) {
			fprintf(stderr, "flow-bench: %s: callback payload %s\n",
			    cbtube, pl != NULL ? pl : "?");
			errors++;
		}
		free(pl);
		if (sluice_ack(c, t[0].id, t[0].lease, NULL, NULL) != 0)
			errors++;
		sluice_task_free(t);
	}
	if (found != 1)
		fprintf(stderr, "flow-bench: %s: %d callbacks, not 1\n", cbtube,
		    found);
	return errors + (found != 1);
}

/* Puts and drains one tube: plain tasks, the graphs or one batch of
 * `want` tasks. */
static struct times
run_one(const char *url, const char *tube, enum kind kind, uint64_t want,
    uint32_t graphs, uint32_t fanout, int workers, int *errors)
{
	struct sluice_client *c = bench_connect("flow-bench", url);
	struct run r = { .url = url,
		.tube = tube,
		.want = want,
		.fanout = kind == K_FLOW ? fanout : 0 };
	pthread_t *th = calloc((size_t)workers, sizeof(*th));
	struct times tm;
	double t0 = bench_mono_s(), cpu0 = cpu_of(server_pid);

	if (kind == K_FLOW) {
		put_flow(c, tube, graphs, fanout);
	} else if (kind == K_BATCH) {
		batch_open(c, tube);
		put_tasks(
		    c, tube, tube, (size_t)want, R_PLAIN, NULL, NULL, 0, NULL);
		batch_close(c, tube);
	} else {
		put_tasks(
		    c, tube, NULL, (size_t)want, R_PLAIN, NULL, NULL, 0, NULL);
	}
	tm.put_s = bench_mono_s() - t0;
	t0 = bench_mono_s();
	r.end = clock_mono_ms() + 600000;
	for (int i = 0; i < workers; i++)
		pthread_create(&th[i], NULL, worker, &r);
	for (int i = 0; i < workers; i++)
		pthread_join(th[i], NULL);
	if (kind == K_BATCH)
		*errors += batch_wait_fired(c, tube, want);
	tm.drain_s = bench_mono_s() - t0;
	tm.cpu_s = cpu_of(server_pid) - cpu0;
	if (kind == K_BATCH) {
		char ok[64], done[64];

		batch_names(tube, ok, done, sizeof(ok));
		*errors += batch_check_callback(c, ok, "success", want);
		*errors += batch_check_callback(c, done, "complete", want);
	}
	sluice_close(c);
	free(th);
	*errors += r.errors + r.early;
	if (r.early != 0)
		fprintf(stderr,
		    "flow-bench: %s: %d tasks taken without their parents, "
		    "or before they were all acked\n",
		    tube, r.early);
	if (r.n != want) {
		fprintf(stderr, "flow-bench: %s: %lu of %" PRIu64 " tasks\n",
		    tube, (unsigned long)r.n, want);
		(*errors)++;
	}
	return tm;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(const double *v, int n)
{
	double s[ROUNDS_MAX];

	memcpy(s, v, (size_t)n * sizeof(*v));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "workers", required_argument, NULL, 'w' },
		{ "graphs", required_argument, NULL, 'g' },
		{ "fanout", required_argument, NULL, 'f' },
		{ "batch", required_argument, NULL, 'b' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "server-pid", required_argument, NULL, 'p' },
		{ "only", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *url = "tcp://127.0.0.1:7711";
	int workers = 32, rounds = 3, ch, errors = 0;
	uint32_t graphs = 1000, fanout = 100;
	uint64_t batch = 0;
	int only = -1; /* --only plain (0) or work (1): that one alone */
	bool json = false;
	double pt[2][ROUNDS_MAX], dt[2][ROUNDS_MAX], tt[2][ROUNDS_MAX];
	double ct[2][ROUNDS_MAX];

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			url = optarg;
			break;
		case 'w':
			workers = atoi(optarg);
			break;
		case 'g':
			graphs = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'f':
			fanout = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'b':
			batch = strtoull(optarg, NULL, 10);
			if (batch == 0)
				batch = UINT64_MAX; /* refused below */
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'j':
			json = true;
			break;
		case 'p':
			server_pid = atoi(optarg);
			break;
		case 'o':
			only = strcmp(optarg, "plain") == 0 ? 0
			    : strcmp(optarg, "work") == 0   ? 1
			                                    : 2;
			break;
		default:
			fprintf(stderr,
			    "usage: flow-bench [--url URL] [--workers W] "
			    "[--graphs G] [--fanout F | --batch N] "
			    "[--rounds R] [--server-pid PID] "
			    "[--only plain|work] [--json]\n");
			return 2;
		}
	}
	if (workers < 1 || graphs == 0 || fanout < 2 || fanout > FANOUT_MAX ||
	    rounds < 1 || rounds > ROUNDS_MAX || batch > 10000000 || only > 1) {
		fprintf(stderr,
		    "flow-bench: workers >= 1, graphs >= 1, "
		    "fanout 2..1000, batch 1..10000000, rounds 1..9, "
		    "only plain or work\n");
		return 2;
	}
	enum kind wk = batch != 0 ? K_BATCH : K_FLOW;
	const char *wname = wk == K_BATCH ? "batch" : "flow";
	uint64_t tasks =
	    wk == K_BATCH ? batch : (uint64_t)graphs * (fanout + 2);

	for (int k = 0; k < 4; k++)
		memset(payloads[k], k, PAYLOAD);

	if (wk == K_BATCH)
		printf("a batch of %" PRIu64 " tasks with on_success and "
		       "on_complete against %" PRIu64
		       " plain tasks, %d workers\n",
		    tasks, tasks, workers);
	else
		printf("%" PRIu32 " graphs of 1 -> %" PRIu32 " -> 1 (%" PRIu64
		       " tasks) against %" PRIu64 " plain tasks, %d workers\n",
		    graphs, fanout, tasks, tasks, workers);
	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < 2; k++) {
			/* Alternate which goes first. */
			int wf = (i % 2) ^ k;
			char tube[32];
			struct times tm;

			if (only >= 0 && wf != only) {
				pt[wf][i] = dt[wf][i] = tt[wf][i] = 1;
				ct[wf][i] = 1;
				continue;
			}
			snprintf(tube, sizeof(tube), "bench.%s.%d",
			    wf ? wname : "plain", i);
			tm = run_one(url, tube, wf ? wk : K_PLAIN, tasks,
			    graphs, fanout, workers, &errors);
			pt[wf][i] = tm.put_s;
			dt[wf][i] = tm.drain_s;
			tt[wf][i] = tm.put_s + tm.drain_s;
			ct[wf][i] = tm.cpu_s;
			printf("round %d %-5s put %.2f s (%.0f tasks/s), "
			       "drain %.2f s (%.0f tasks/s), total %.2f s, "
			       "server CPU %.2f s\n",
			    i + 1, wf ? wname : "plain", tm.put_s,
			    (double)tasks / tm.put_s, tm.drain_s,
			    (double)tasks / tm.drain_s, tt[wf][i], tm.cpu_s);
		}
	}
	double mp[2], md[2], mt[2], mc[2];

	for (int k = 0; k < 2; k++) {
		mp[k] = median(pt[k], rounds);
		md[k] = median(dt[k], rounds);
		mt[k] = median(tt[k], rounds);
		mc[k] = median(ct[k], rounds);
	}
	printf("median: plain put %.2f s, drain %.2f s, total %.2f s; "
	       "%s put %.2f s, drain %.2f s, total %.2f s\n",
	    mp[0], md[0], mt[0], wname, mp[1], md[1], mt[1]);
	printf("cost of the %s: put %+.1f %%, drain %+.1f %%, total "
	       "%+.1f %%; errors %d\n",
	    wk == K_BATCH ? "batch" : "workflow", 100 * (mp[1] / mp[0] - 1),
	    100 * (md[1] / md[0] - 1), 100 * (mt[1] / mt[0] - 1), errors);
	if (server_pid > 0)
		printf("server CPU (median): plain %.2f s, %s %.2f s: %+.1f "
		       "%%\n",
		    mc[0], wname, mc[1], 100 * (mc[1] / mc[0] - 1));
	if (json)
		printf("{\"mode\":\"%s\",\"graphs\":%" PRIu32
		       ",\"fanout\":%" PRIu32 ",\"tasks\":%" PRIu64
		       ",\"workers\":%d,\"rounds\":%d,"
		       "\"plain_put_s\":%.3f,\"plain_drain_s\":%.3f,"
		       "\"%s_put_s\":%.3f,\"%s_drain_s\":%.3f,"
		       "\"cost_pct\":%.1f,\"plain_cpu_s\":%.2f,"
		       "\"%s_cpu_s\":%.2f,\"errors\":%d}\n",
		    wname, wk == K_BATCH ? 0 : graphs,
		    wk == K_BATCH ? 0 : fanout, tasks, workers, rounds, mp[0],
		    md[0], wname, mp[1], wname, md[1],
		    100 * (mt[1] / mt[0] - 1), mc[0], wname, mc[1], errors);
	return errors == 0 ? 0 : 1;
}
