/* cli_put - `sluice put`: one task from the command line or a file, or
 * with --lines one per line of stdin, sent in batches of the lines that
 * are ready (cli_lines.h). What it prints: the new task's id alone (for
 * scripts), or with --json {"id":N,"created":BOOL}; that a key already
 * held a task, or a newer version, is said on stderr beside it. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"
#include "cli_lines.h"

/* What put prints of a task it put: {"id":N,"created":BOOL} with --json,
 * else the id. */
static void
print_put(bool json, uint64_t id, bool created)
{
	if (json)
		printf("{\"id\":%" PRIu64 ",\"created\":%s}\n", id,
		    created ? "true" : "false");
	else
		printf("%" PRIu64 "\n", id);
}

/* What put prints: print_put's, with "replaced" for a put with replace
 * and "stale_version" for one with if_newer. Without --json, the id alone
 * stays on stdout, for scripts; that nothing new was stored, or nothing
 * changed, is said on stderr beside it. */
static void
print_put_result(const struct sluice_put_opts *o,
    const struct sluice_put_result *res, bool json)
{
	if (json && o->replace) {
		printf("{\"id\":%" PRIu64 ",\"created\":%s,\"replaced\":%s",
		    res->id, res->created ? "true" : "false",
		    res->replaced ? "true" : "false");
		if (o->if_newer)
			printf(",\"stale_version\":%s",
			    res->stale_version ? "true" : "false");
		puts("}");
		return;
	}
	if (json && (o->debounce_ms || o->throttle_ms)) {
		printf("{\"id\":%" PRIu64 ",\"created\":%s,\"%s\":%s}\n",
		    res->id, res->created ? "true" : "false",
		    o->debounce_ms ? "replaced" : "throttled",
		    (o->debounce_ms ? res->replaced : res->throttled)
		        ? "true"
		        : "false");
		return;
	}
	print_put(json, res->id, res->created);
	if (json || res->created)
		return;
	if (res->throttled)
		fprintf(stderr,
		    "sluice: put: key %s throttled: task %" PRIu64
		    " was put less than the window ago; nothing created\n",
		    o->key, res->id);
	else if (res->stale_version)
		fprintf(stderr,
		    "sluice: put: key %s: task %" PRIu64 " has a version of "
		    "%" PRIu64 " or newer; nothing changed\n",
		    o->key, res->id, o->if_newer);
	else if (o->replace || o->debounce_ms)
		fprintf(stderr,
		    "sluice: put: key %s: task %" PRIu64
		    " updated; nothing created\n",
		    o->key, res->id);
	else
		fprintf(stderr,
		    "sluice: put: key %s exists as task %" PRIu64
		    "; nothing created\n",
		    o->key ? o->key : "", res->id);
}

/* The longest debounce or throttle window the server takes (30 days). */
#define PUT_MODE_MAX_MS (30ull * 24 * 3600 * 1000)

enum {
	LINES_BATCH = 100,     /* lines per batch put */
	LINES_BYTES = 4 << 20, /* bytes per batch put, at most */
};

/* What put --lines prints as it goes: with --json one array, an element
 * per line as its batch is stored ("[" before the first, "," before the
 * others, "]" at the end), else an id per stored line; each refused line
 * gets its own error on stderr. */
struct lines_out {
	bool json;
	size_t printed;         /* JSON elements so far */
	int status;             /* EXIT_ERR once a line was refused */
	int limit_known;        /* 0: not asked yet; 1: known; -1: not told */
	uint64_t limit;         /* the server's --max-payload, when told */
	unsigned long accepted; /* lines stored */
	bool full;              /* the log refused one: stop reading */
};

/* A batch the server refused whole with one of these may have been
 * refused for one of its lines alone (a server that checks every item's
 * limits while it decodes the request does so): its halves are tried
 * apart, down to the line to blame. */
static bool
line_error(int rc)
{
	return rc == SLUICE_ETOOBIG || rc == SLUICE_ETUBE ||
	    rc == SLUICE_EKEY || rc == SLUICE_ELIMIT || rc == SLUICE_EINVAL ||
	    rc == SLUICE_EMSGSIZE;
}

/* "payload too large (N bytes; the limit is M)": the limit when the
 * server's stats say it (node key max_payload). */
static void
too_large(
    struct cli *cli, struct lines_out *lo, size_t len, char *out, size_t n)
{
	struct sluice_stats *st;

	if (lo->limit_known == 0) {
		lo->limit_known = -1;
		if (sluice_stats(cli->c, NULL, &st) == 0) {
			if (sluice_kv_get(st->kv, st->nkv, "max_payload",
			        &lo->limit) == 0)
				lo->limit_known = 1;
			sluice_stats_free(st);
		}
	}
	if (lo->limit_known == 1)
		snprintf(out, n, "%s (%zu bytes; the limit is %" PRIu64 ")",
		    sluice_strerror(SLUICE_ETOOBIG), len, lo->limit);
	else
		snprintf(out, n,
		    "%s (%zu bytes, over the server's --max-payload)",
		    sluice_strerror(SLUICE_ETOOBIG), len);
}

static void
lines_element(struct lines_out *lo)
{
	fputs(lo->printed++ == 0 ? "[" : ",", stdout);
}

/* One line's result. */
static void
line_result(struct cli *cli, struct lines_out *lo,
    const struct sluice_batch_item *it, unsigned long lineno)
{
	char why[256];

	if (it->rc == 0) {
		if (lo->json) {
			lines_element(lo);
			printf("{\"line\":%lu,\"id\":%" PRIu64
			       ",\"created\":%s}\n",
			    lineno, it->id, it->created ? "true" : "false");
		} else {
			printf("%" PRIu64 "\n", it->id);
		}
		lo->accepted++;
		return;
	}
	if (it->rc == SLUICE_ENOSPC)
		lo->full = true;
	if (it->rc == SLUICE_ETOOBIG)
		too_large(cli, lo, it->len, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "%s", sluice_strerror(it->rc));
	fprintf(stderr, "sluice: put: line %lu: %s\n", lineno, why);
	if (lo->json) {
		lines_element(lo);
		printf("{\"line\":%lu,\"error\":", lineno);
		cli_json_cstr(stdout, why);
		printf(",\"code\":%d}\n", it->rc);
	}
	lo->status = EXIT_ERR;
}

/* Puts the tasks of `items` (lines `lineno`) and prints their results in
 * order. Returns 0, or EXIT_ERR when the batch failed as a whole (the
 * connection, a full log): its outcome is then unknown, and said. */
static int
put_lines_batch(struct cli *cli, struct sluice_batch_item *items, size_t n,
    const unsigned long *lineno, struct lines_out *lo)
{
	int rc = cli->c == NULL ? sluice_router_put_batch(cli->r, items, n)
	                        : sluice_put_batch(cli->c, items, n);

	if (rc != 0 && line_error(rc) && n > 1) {
		size_t h = n / 2;

		if ((rc = put_lines_batch(cli, items, h, lineno, lo)) != 0)
			return rc;
		return put_lines_batch(cli, items + h, n - h, lineno + h, lo);
	}
	if (rc != 0 && line_error(rc)) {
		items[0].rc = rc; /* one line, refused */
		rc = 0;
	}
	if (rc == SLUICE_ENOSPC)
		lo->full = true;
	if (rc != 0) {
		lo->status = EXIT_ERR;
		return n == 1 ? cli_fail(cli, rc, "put: line %lu", lineno[0])
		              : cli_fail(cli, rc, "put: lines %lu-%lu",
		                    lineno[0], lineno[n - 1]);
	}
	for (size_t i = 0; i < n; i++)
		line_result(cli, lo, &items[i], lineno[i]);
	fflush(stdout);
	return 0;
}

/* --lines: one task per line of stdin, in batches of the lines that are
 * already there (cli_lines.h). */
static int
put_lines(struct cli *cli, const struct sluice_put_opts *o, bool json)
{
	struct line_reader lr = { 0 };
	struct sluice_batch_item items[LINES_BATCH];
	unsigned long lineno[LINES_BATCH];
	struct line_span sp[LINES_BATCH];
	struct lines_out lo = { .json = json, .status = EXIT_OK };
	int rc;

	for (;;) {
		size_t n = 0, off = 0;

		rc = lines_gather(&lr, LINES_BATCH, LINES_BYTES, sp, &n, &off);
		if (rc != 0) {
			fprintf(stderr, "sluice: put: reading stdin: %s\n",
			    strerror(-rc));
			lo.status = EXIT_ERR;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			items[i].opts = *o;
			items[i].payload = lr.buf + sp[i].start;
			items[i].len = sp[i].len;
			lineno[i] = sp[i].lineno;
		}
		if (n > 0 && put_lines_batch(cli, items, n, lineno, &lo) != 0 &&
		    !lo.full)
			break;
		if (lo.full) {
			/* what follows would be refused too, until the log
			 * has room again: say how far it got */
			fprintf(stderr,
			    "sluice: put: the log is full: stopped after line "
			    "%lu; %lu lines accepted\n",
			    lineno[n - 1], lo.accepted);
			lo.status = EXIT_ERR;
			break;
		}
		if (lines_consume(&lr, off))
			break;
	}
	lines_free(&lr);
	if (json)
		fputs(lo.printed == 0 ? "[]\n" : "]\n", stdout);
	return lo.status;
}

static const char put_usage[] = "usage: sluice put [options] PAYLOAD\n"
                                "       sluice put [options] - < FILE\n"
                                "       sluice put [options] --file FILE\n"
                                "       sluice put [options] --lines < FILE\n";
static const char put_help[] =
    "\nPuts a task into a tube and prints its id. The payload is PAYLOAD,\n"
    "or with - all of stdin, or with --file all of FILE: bytes as they\n"
    "are, up to the server's --max-payload.\n\n"
    "  -t, --tube TUBE       the tube (default \"default\")\n"
    "  -p, --priority N      0 is the most urgent (default 1024)\n"
    "      --delay DUR       ready only after DUR\n"
    "      --at UNIX_MS      ready only at this time (unix milliseconds)\n"
    "      --ttr DUR         how long a taker may hold it (default: the\n"
    "                        server's, 60s)\n"
    "      --max-attempts N  bury it when it was taken N times (default 0:\n"
    "                        no limit)\n"
    "      --key KEY         while a task with this key lives (or for the\n"
    "                        server's dedup window after), putting it again\n"
    "                        creates nothing: it prints the existing id, and\n"
    "                        on stderr \"key KEY exists as task N\"\n"
    "      --replace         with --key: update the live task instead\n"
    "      --if-newer V      with --replace: only if V (a version, such as\n"
    "                        the source row's updated_at, >= 1) is greater\n"
    "                        than the version stored with the live task\n"
    "                        (none stored: any V); else nothing changes and\n"
    "                        stderr says so (exit 0). V is stored with the\n"
    "                        task, a new one too\n"
    "      --debounce DUR    with --key: each put replaces the key's waiting\n"
    "                        task (content and settings) and makes it due\n"
    "                        DUR from now, so of a burst only the last\n"
    "                        runs, DUR after it (a running task gets the\n"
    "                        new content when its lease ends). 1ms to 30d\n"
    "      --throttle DUR    with --key: a put within DUR of the key's last\n"
    "                        accepted throttled put is ignored, whatever\n"
    "                        became of that task: it prints that task's id,\n"
    "                        and on stderr \"key KEY throttled\". Past DUR\n"
    "                        it is a new task (or, while the key's task\n"
    "                        lives, that task). 1ms to 30d\n"
    "      --group G         its fair group (a tenant's id, ...: 1-200\n"
    "                        bytes of A-Z a-z 0-9 _ . : / -): tasks of\n"
    "                        equal priority go out in turn across the\n"
    "                        tube's groups (sluice groups T lists them)\n"
    "      --after ID[,ID..] it waits (state waiting) until each of these\n"
    "                        tasks is acked, then becomes ready (or\n"
    "                        delayed until --delay/--at); a take of it\n"
    "                        carries their results. Repeatable; at most\n"
    "                        1000 parents with --after-key. An id the\n"
    "                        server does not know is refused; one acked\n"
    "                        already counts as done\n"
    "      --after-key KEY   the same, a parent named by its key in TUBE\n"
    "      --on-parent-failure fail|ignore|cancel\n"
    "                        when a parent fails for good (buried, dead-\n"
    "                        lettered, deleted): fail (the default) buries\n"
    "                        it with \"task N failed: ERROR\", ignore counts\n"
    "                        the parent as done, cancel deletes it (and its\n"
    "                        own children follow their rules)\n"
    "      --batch NAME      it joins the batch NAME (1-200 bytes of A-Z\n"
    "                        a-z 0-9 _ . : / -; sluice batch set|close|show\n"
    "                        NAME): refused once the batch is closed\n"
    "      --every DUR       recurring: each ack schedules it again DUR\n"
    "                        after its run_at\n"
    "      --file FILE       the payload is the content of FILE\n"
    "      --lines           one task per line of stdin (empty lines are\n"
    "                        skipped), sent in batches; prints one id per\n"
    "                        line as each batch is stored. A line that is\n"
    "                        refused (too large, ...) is said on stderr\n"
    "                        with its number, the others are stored; the\n"
    "                        exit status is 1 when any line was refused.\n"
    "                        It stops at the first line a full log\n"
    "                        refuses, saying how many were accepted\n"
    "      --json            print {\"id\":N,\"created\":true} (with\n"
    "                        --replace, \"replaced\" too; with --if-newer,\n"
    "                        \"stale_version\" too; with --debounce,\n"
    "                        \"replaced\", with --throttle \"throttled\"); "
    "with\n"
    "                        --lines one array, an element per line:\n"
    "                        {\"line\":N,\"id\":N,\"created\":true} or\n"
    "                        {\"line\":N,\"error\":TEXT,\"code\":N}\n";

enum { SLUICE_AFTER_CLI_MAX = 1000 };

/* The parents of a put: ids (--after, each a list), keys (--after-key)
 * and the rule (--on-parent-failure). */
struct put_deps {
	uint64_t ids[SLUICE_AFTER_CLI_MAX + 1];
	const char *keys[SLUICE_AFTER_CLI_MAX + 1];
	size_t nids, nkeys;
};

static int
put_deps_opt(struct cli *cli, int ch, char *arg, struct put_deps *d,
    struct sluice_put_opts *o)
{
	if (ch == OPT_AFTER_KEY) {
		if (d->nids + d->nkeys >= SLUICE_AFTER_CLI_MAX)
			return cli_usage_error(cli, "at most 1000 parents");
		d->keys[d->nkeys++] = arg;
		return 0;
	}
	if (ch == OPT_ON_PARENT_FAILURE) {
		if (strcmp(arg, "fail") == 0)
			o->on_parent_failure = SLUICE_ON_PARENT_FAIL;
		else if (strcmp(arg, "ignore") == 0)
			o->on_parent_failure = SLUICE_ON_PARENT_IGNORE;
		else if (strcmp(arg, "cancel") == 0)
			o->on_parent_failure = SLUICE_ON_PARENT_CANCEL;
		else
			return cli_usage_error(cli,
			    "--on-parent-failure is fail, ignore or cancel");
		return 0;
	}
	for (char *save = NULL, *tok = strtok_r(arg, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		int rc;

		if (d->nids + d->nkeys >= SLUICE_AFTER_CLI_MAX)
			return cli_usage_error(cli, "at most 1000 parents");
		if ((rc = cli_parse_num(cli, "--after", tok, 1, UINT64_MAX,
		         &d->ids[d->nids])) != 0)
			return rc;
		d->nids++;
	}
	return 0;
}

/* --debounce DUR, --throttle DUR: 1 ms to 30 days, with a unit. */
static int
put_mode_opt(
    struct cli *cli, int ch, const char *arg, struct sluice_put_opts *o)
{
	const char *name = ch == OPT_DEBOUNCE ? "--debounce" : "--throttle";
	uint64_t *ms = ch == OPT_DEBOUNCE ? &o->debounce_ms : &o->throttle_ms;
	int rc;

	if ((rc = cli_parse_ms(cli, name, arg, 1, ms)) != 0)
		return rc;
	if (*ms > PUT_MODE_MAX_MS)
		return cli_usage_error(cli,
		    ch == OPT_DEBOUNCE ? "--debounce is at most 30d"
		                       : "--throttle is at most 30d");
	return 0;
}

/* What the deduplication modes exclude. */
static int
put_mode_usage(struct cli *cli, const struct sluice_put_opts *o, bool delay)
{
	if (!o->debounce_ms && !o->throttle_ms)
		return 0;
	if (o->debounce_ms && o->throttle_ms)
		return cli_usage_error(
		    cli, "--debounce and --throttle exclude each other");
	if (o->key == NULL)
		return cli_usage_error(cli,
		    o->debounce_ms ? "--debounce needs --key"
		                   : "--throttle needs --key");
	if (o->replace || o->if_newer)
		return cli_usage_error(cli,
		    o->debounce_ms
		        ? "--debounce replaces by itself: no --replace or "
		          "--if-newer with it"
		        : "--throttle takes no --replace or --if-newer");
	if (delay || o->run_at)
		return cli_usage_error(cli,
		    o->debounce_ms
		        ? "--debounce sets the run time: no --delay or --at "
		          "with it"
		        : "--throttle takes no --delay or --at");
	return 0;
}

static int
cmd_put(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		TUBE_OPT,
		TASK_OPTS,
		{ "key", required_argument, NULL, OPT_KEY },
		{ "replace", no_argument, NULL, OPT_REPLACE },
		{ "if-newer", required_argument, NULL, OPT_IF_NEWER },
		{ "debounce", required_argument, NULL, OPT_DEBOUNCE },
		{ "throttle", required_argument, NULL, OPT_THROTTLE },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "every", required_argument, NULL, OPT_EVERY },
		{ "after", required_argument, NULL, OPT_AFTER_ID },
		{ "after-key", required_argument, NULL, OPT_AFTER_KEY },
		{ "on-parent-failure", required_argument, NULL,
		    OPT_ON_PARENT_FAILURE },
		{ "lines", no_argument, NULL, OPT_LINES },
		{ "file", required_argument, NULL, OPT_FILE },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "t:p:h", opts };
	struct sluice_put_opts o;
	struct sluice_put_result res;
	struct cli_task_opts to = { 0 };
	static struct put_deps deps;
	bool lines = false, rule = false;
	const char *file = NULL, *payload;
	char *data = NULL;
	size_t len;
	int ch, rc;

	sluice_put_opts_init(&o);
	while ((ch = cli_next_opt(cli, &a)) != -1) {
		if ((rc = cli_task_opt(cli, ch, optarg, &to)) >= 0) {
			if (rc != 0)
				return rc;
			continue;
		}
		switch (ch) {
		case 't':
			o.tube = optarg;
			break;
		case OPT_KEY:
			o.key = optarg;
			break;
		case OPT_GROUP:
			o.group = optarg;
			break;
		case OPT_BATCH:
			o.batch = optarg;
			break;
		case OPT_REPLACE:
			o.replace = 1;
			break;
		case OPT_IF_NEWER:
			if ((rc = cli_parse_num(cli, "--if-newer", optarg, 1,
			         UINT64_MAX, &o.if_newer)) != 0)
				return rc;
			break;
		case OPT_DEBOUNCE:
		case OPT_THROTTLE:
			if ((rc = put_mode_opt(cli, ch, optarg, &o)) != 0)
				return rc;
			break;
		case OPT_EVERY:
			if ((rc = cli_parse_ms(
			         cli, "--every", optarg, 0, &o.period_ms)) != 0)
				return rc;
			break;
		case OPT_AFTER_ID:
		case OPT_AFTER_KEY:
		case OPT_ON_PARENT_FAILURE:
			rule |= ch == OPT_ON_PARENT_FAILURE;
			if ((rc = put_deps_opt(cli, ch, optarg, &deps, &o)) !=
			    0)
				return rc;
			break;
		case OPT_LINES:
			lines = true;
			break;
		case OPT_FILE:
			file = optarg;
			break;
		}
	}
	o.after = deps.ids;
	o.nafter = deps.nids;
	o.after_keys = deps.keys;
	o.nafter_keys = deps.nkeys;
	if (rule && deps.nids + deps.nkeys == 0)
		return cli_usage_error(
		    cli, "--on-parent-failure needs --after or --after-key");
	if (lines && deps.nids + deps.nkeys > 0)
		return cli_usage_error(cli,
		    "--after with --lines: put the lines' tasks one by one");
	if (a.stop)
		return a.status;
	if (to.has_priority)
		o.priority = (uint32_t)to.priority;
	if (to.has_delay)
		o.delay_ms = to.delay_ms;
	o.run_at = to.run_at;
	if (to.has_ttr)
		o.ttr_ms = to.ttr_ms;
	if (to.has_max_attempts)
		o.max_attempts = (uint32_t)to.max_attempts;
	if (to.has_delay && o.run_at)
		return cli_usage_error(
		    cli, "--delay and --at exclude each other");
	if (o.replace && o.key == NULL)
		return cli_usage_error(cli, "--replace needs --key");
	if (o.if_newer && !o.replace)
		return cli_usage_error(
		    cli, "--if-newer needs --replace (and --key)");
	if ((rc = put_mode_usage(cli, &o, to.has_delay)) != 0)
		return rc;
	if (lines && o.key)
		return cli_usage_error(cli,
		    "--key with --lines would give every line the same key");
	if (lines && (optind != argc || file != NULL))
		return cli_usage_error(cli,
		    "--lines reads stdin: no PAYLOAD, - or --file with it");
	if (file != NULL && optind != argc)
		return cli_usage_error(
		    cli, "the payload is --file's: no PAYLOAD or - with it");
	if (!lines && file == NULL && optind != argc - 1)
		return cli_usage_error(cli,
		    optind == argc
		        ? "a PAYLOAD (- for stdin, --file F, or --lines) is "
		          "needed"
		        : "one PAYLOAD only (quote it)");
	if (lines) {
		if ((rc = cli_connect_routed(cli)) != 0)
			return rc;
		return put_lines(cli, &o, a.json);
	}
	if (file != NULL || strcmp(argv[optind], "-") == 0) {
		if ((rc = cli_read_payload(file, &data, &len)) != 0)
			return rc;
		payload = data;
	} else {
		payload = argv[optind];
		len = strlen(payload);
	}
	if ((rc = cli_connect_routed(cli)) == 0 &&
	    (rc = cli->c == NULL
	            ? sluice_router_put(cli->r, &o, payload, len, &res)
	            : sluice_put_ex(cli->c, &o, payload, len, &res)) != 0)
		rc = cli_fail(cli, rc, "put");
	free(data);
	if (rc != 0)
		return rc;
	print_put_result(&o, &res, a.json);
	return EXIT_OK;
}

CLI_COMMAND(put, cmd_put);
