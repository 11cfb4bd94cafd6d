/* cli_groups - `sluice groups T`: a tube's fair groups with their ready
 * and taken counts and the age of their oldest ready task, the largest
 * backlog first, as a table or JSON.
 *
 * The server keeps no listing of groups: this walks every task of the
 * tube (sluice_list_after, without payloads, pages of 1000, each task
 * once) and counts by group, so it costs a request per 1,000 tasks and
 * memory for the groups' names. The "" group (tasks put without one)
 * shows as "-" (JSON: null). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_util.h"
#include "json/json.h"
#include "util/dur.h"

/* One task's part: its group (NULL: none), ready or taken, due time. */
struct gtask {
	char *group;
	int state;
	uint64_t run_at;
};

struct grow {
	const char *group;             /* NULL: the "" group */
	uint64_t ready, taken, oldest; /* oldest: the least ready run_at */
};

struct gwalk {
	struct gtask *t;
	size_t n, cap;
};

static int
by_group(const void *a, const void *b)
{
	const struct gtask *x = a, *y = b;

	if (x->group == NULL || y->group == NULL)
		return (x->group != NULL) - (y->group != NULL);
	return strcmp(x->group, y->group);
}

static int
by_backlog(const void *a, const void *b)
{
	const struct grow *x = a, *y = b;

	if (x->ready != y->ready)
		return x->ready > y->ready ? -1 : 1;
	if (x->taken != y->taken)
		return x->taken > y->taken ? -1 : 1;
	if (x->group == NULL || y->group == NULL)
		return (x->group != NULL) - (y->group != NULL);
	return strcmp(x->group, y->group);
}

static int
keep(struct gwalk *w, const struct sluice_task *t)
{
	if (t->state != SLUICE_READY && t->state != SLUICE_TAKEN)
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1024;
		struct gtask *p = realloc(w->t, cap * sizeof(*p));

		if (p == NULL)
			return SLUICE_ENOMEM;
		w->t = p;
		w->cap = cap;
	}
	w->t[w->n].group = NULL;
	if (t->group != NULL && (w->t[w->n].group = strdup(t->group)) == NULL)
		return SLUICE_ENOMEM;
	w->t[w->n].state = t->state;
	w->t[w->n].run_at = t->run_at;
	w->n++;
	return 0;
}

/* Every ready and taken task of the tube, page by page. */
static int
walk(struct cli *cli, const char *tube, struct gwalk *w)
{
	uint64_t after = 0;
	int rc;

	for (;;) {
		struct sluice_task *t;
		size_t n;

		rc = sluice_list_after(cli->c, tube, 0, SLUICE_ORDER_ID, after,
		    SLUICE_LIST_MAX, 0, &t, &n);
		if (rc != 0)
			return rc;
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = keep(w, &t[i]);
		after = n == SLUICE_LIST_MAX ? t[n - 1].id : 0;
		sluice_task_free(t);
		if (rc != 0 || after == 0)
			return rc;
	}
}

/* The groups of the walked tasks, sorted by backlog; their count. */
static size_t
rows(struct gwalk *w, struct grow *out)
{
	size_t n = 0;

	qsort(w->t, w->n, sizeof(*w->t), by_group);
	for (size_t i = 0; i < w->n; i++) {
		struct gtask *t = &w->t[i];

		if (n == 0 || by_group(t, &w->t[i - 1]) != 0)
			out[n++] = (struct grow) { t->group, 0, 0, UINT64_MAX };
		if (t->state == SLUICE_TAKEN) {
			out[n - 1].taken++;
		} else {
			out[n - 1].ready++;
			if (t->run_at < out[n - 1].oldest)
				out[n - 1].oldest = t->run_at;
		}
	}
	qsort(out, n, sizeof(*out), by_backlog);
	return n;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
print(const struct grow *g, size_t n, bool json)
{
	uint64_t now = now_ms();
	char age[32];

	if (!json)
		printf("%-24s %10s %10s  %s\n", "GROUP", "READY", "TAKEN",
		    "OLDEST_READY");
	else
		fputc('[', stdout);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = g[i].ready == 0 ? 0
		    : now > g[i].oldest      ? now - g[i].oldest
		                             : 0;

		if (json) {
			printf("%s{\"group\":", i ? "," : "");
			json_cstr(stdout, g[i].group);
			printf(",\"ready\":%" PRIu64 ",\"taken\":%" PRIu64
			       ",\"oldest_ready_ms\":%" PRIu64 "}",
			    g[i].ready, g[i].taken, a);
			continue;
		}
		if (g[i].ready != 0)
			dur_fmt(age, sizeof(age), a);
		else
			snprintf(age, sizeof(age), "-");
		printf("%-24s %10" PRIu64 " %10" PRIu64 "  %s\n",
		    g[i].group ? g[i].group : "-", g[i].ready, g[i].taken, age);
	}
	if (json)
		fputs("]\n", stdout);
}

static const char groups_usage[] = "usage: sluice groups TUBE [--json]\n";
static const char groups_help[] =
    "\nLists a tube's fair groups (put --group) that have ready or taken\n"
    "tasks: their ready and taken counts and how long their oldest ready\n"
    "task has waited, the largest backlog (ready) first. \"-\" is the\n"
    "tasks put without a group. It reads every task of the tube, a\n"
    "request per 1,000 tasks.\n\n"
    "      --json          print [{\"group\":G,\"ready\":N,\"taken\":N,\n"
    "                      \"oldest_ready_ms\":N},...] (group null: none)\n";

static int
cmd_groups(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "h", opts };
	struct gwalk w = { 0 };
	struct grow *g = NULL;
	const char *tube;
	size_t n;
	int rc;

	while (cli_next_opt(cli, &a) != -1)
		;
	if (a.stop)
		return a.status;
	if (optind != argc - 1)
		return cli_usage_error(cli, "give one TUBE");
	tube = argv[optind];
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	rc = walk(cli, tube, &w);
	if (rc == 0 && (g = malloc((w.n ? w.n : 1) * sizeof(*g))) == NULL)
		rc = SLUICE_ENOMEM;
	if (rc == 0) {
		n = rows(&w, g);
		print(g, n, a.json);
	}
	for (size_t i = 0; i < w.n; i++)
		free(w.t[i].group);
	free(w.t);
	free(g);
	if (rc != 0)
		return cli_fail(cli, rc, "groups %s", tube);
	return EXIT_OK;
}

CLI_COMMAND(groups, cmd_groups);
