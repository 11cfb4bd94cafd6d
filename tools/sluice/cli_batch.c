/* cli_batch - the batch forms of ack and delete: `sluice ack ID:LEASE...`,
 * `sluice ack --lines` (ID LEASE per line of stdin) and `sluice delete
 * ID...`. Tasks go in requests of up to SLUICE_BATCH_MAX, each one commit
 * on the server; every task gets its own line of result, in order: "acked
 * 42" on stdout, or the server's reason on stderr. With --json, one array
 * of {"id":N,"acked":true} / {"id":N,"error":"...","code":N} (a line of
 * --lines that is no "ID LEASE" gets {"line":N,"error":...}). Exit 1 when
 * any task was refused. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_lines.h"
#include "cli_util.h"

/* What has been printed so far. */
struct batch_out {
	const char *verb; /* "ack", "delete" */
	const char *done; /* "acked", "deleted" */
	bool json;
	size_t printed; /* JSON elements */
	int status;     /* EXIT_ERR once a task was refused */
};

static void
element(struct batch_out *bo)
{
	fputs(bo->printed++ == 0 ? "[" : ",", stdout);
}

static void
print_result(struct batch_out *bo, uint64_t id, const struct sluice_result *r)
{
	if (r->rc == 0) {
		if (bo->json) {
			element(bo);
			printf(
			    "{\"id\":%" PRIu64 ",\"%s\":true}\n", id, bo->done);
		} else {
			printf("%s %" PRIu64 "\n", bo->done, id);
		}
		return;
	}
	fprintf(stderr, "sluice: %s\n", r->errmsg);
	if (bo->json) {
		element(bo);
		printf("{\"id\":%" PRIu64 ",\"error\":", id);
		cli_json_cstr(stdout, r->errmsg);
		printf(",\"code\":%d}\n", r->rc);
	}
	bo->status = EXIT_ERR;
}

/* A line of ack --lines that is not "ID LEASE". */
static void
print_bad_line(struct batch_out *bo, unsigned long lineno)
{
	const char *why = "expected ID LEASE (two whole numbers)";

	fprintf(stderr, "sluice: %s: line %lu: %s\n", bo->verb, lineno, why);
	if (bo->json) {
		element(bo);
		printf("{\"line\":%lu,\"error\":", lineno);
		cli_json_cstr(stdout, why);
		printf(",\"code\":%d}\n", SLUICE_EINVAL);
	}
	bo->status = EXIT_ERR;
}

static int
finish(struct batch_out *bo)
{
	if (bo->json)
		fputs(bo->printed == 0 ? "[]\n" : "]\n", stdout);
	return bo->status;
}

/* Sends one request of n (<= SLUICE_BATCH_MAX) tasks and prints their
 * results. `leases` NULL: a delete. Returns 0, or EXIT_ERR when the
 * request failed as a whole (its outcome is then unknown, and said). */
static int
send_batch(struct cli *cli, struct batch_out *bo, const struct sluice_lease *t,
    size_t n, bool ack)
{
	struct sluice_result res[SLUICE_BATCH_MAX];
	uint64_t ids[SLUICE_BATCH_MAX];
	int rc;

	for (size_t i = 0; i < n; i++)
		ids[i] = t[i].id;
	rc = ack ? sluice_ack_batch(cli->c, t, n, res)
	         : sluice_delete_batch(cli->c, ids, n, res);
	if (rc != 0) {
		bo->status = EXIT_ERR;
		return n == 1
		    ? cli_fail(cli, rc, "%s %" PRIu64, bo->verb, t[0].id)
		    : cli_fail(cli, rc,
		          "%s of %zu tasks (%" PRIu64 " to %" PRIu64 ")",
		          bo->verb, n, t[0].id, t[n - 1].id);
	}
	for (size_t i = 0; i < n; i++)
		print_result(bo, t[i].id, &res[i]);
	fflush(stdout);
	return 0;
}

/* "ID" (no lease wanted) or "ID:LEASE" into *out. */
static int
parse_operand(
    struct cli *cli, const char *s, bool want_lease, struct sluice_lease *out)
{
	const char *colon = strchr(s, ':');
	char id[32];

	if (want_lease != (colon != NULL) ||
	    (colon != NULL && (size_t)(colon - s) >= sizeof(id)))
		return cli_usage_error(cli, "'%s' is not %s", s,
		    want_lease ? "ID:LEASE" : "a task ID");
	if (colon == NULL)
		return cli_parse_num(cli, "ID", s, 1, UINT64_MAX, &out->id);
	memcpy(id, s, (size_t)(colon - s));
	id[colon - s] = '\0';
	out->lease = 0;
	if (cli_parse_uint(id, UINT64_MAX, &out->id) != 0 || out->id == 0 ||
	    cli_parse_uint(colon + 1, UINT64_MAX, &out->lease) != 0)
		return cli_usage_error(cli,
		    "'%s' is not ID:LEASE (the id and the lease its take "
		    "printed)",
		    s);
	return 0;
}

int
cli_batch_operands(
    struct cli *cli, char **args, size_t nargs, bool ack, bool json)
{
	struct batch_out bo = { ack ? "ack" : "delete",
		ack ? "acked" : "deleted", json, 0, EXIT_OK };
	struct sluice_lease *t = calloc(nargs, sizeof(*t));
	int rc = 0;

	if (t == NULL)
		return cli_fail(cli, SLUICE_ENOMEM, "%s", bo.verb);
	for (size_t i = 0; i < nargs && rc == 0; i++)
		rc = parse_operand(cli, args[i], ack, &t[i]);
	if (rc == 0)
		rc = cli_connect(cli);
	if (rc != 0) { /* nothing sent */
		free(t);
		return rc;
	}
	for (size_t i = 0; i < nargs; i += SLUICE_BATCH_MAX) {
		size_t n = nargs - i;

		if (send_batch(cli, &bo, t + i,
		        n < SLUICE_BATCH_MAX ? n : SLUICE_BATCH_MAX, ack) != 0)
			break;
	}
	free(t);
	return finish(&bo);
}

/* "ID LEASE", blanks around and between: true and *out. */
static bool
parse_line(const char *p, size_t len, struct sluice_lease *out)
{
	char line[64], *tok[3], *save = NULL;
	int n = 0;

	if (len >= sizeof(line))
		return false;
	memcpy(line, p, len);
	line[len] = '\0';
	for (char *w = strtok_r(line, " \t", &save); w != NULL && n < 3;
	     w = strtok_r(NULL, " \t", &save))
		tok[n++] = w;
	return n == 2 && cli_parse_uint(tok[0], UINT64_MAX, &out->id) == 0 &&
	    out->id != 0 &&
	    cli_parse_uint(tok[1], UINT64_MAX, &out->lease) == 0;
}

int
cli_ack_lines(struct cli *cli, bool json)
{
	struct batch_out bo = { "ack", "acked", json, 0, EXIT_OK };
	static struct line_span sp[SLUICE_BATCH_MAX];
	static struct sluice_lease t[SLUICE_BATCH_MAX];
	struct line_reader lr = { 0 };
	int rc;

	if ((rc = cli_connect(cli)) != 0)
		return rc;
	for (;;) {
		size_t n = 0, k = 0, off = 0;

		rc =
		    lines_gather(&lr, SLUICE_BATCH_MAX, SIZE_MAX, sp, &n, &off);
		if (rc != 0) {
			fprintf(stderr, "sluice: ack: reading stdin: %s\n",
			    strerror(-rc));
			bo.status = EXIT_ERR;
			break;
		}
		/* results in line order: the lines before a bad one are
		 * sent before it is reported */
		for (size_t i = 0; i < n && rc == 0; i++) {
			if (parse_line(
			        lr.buf + sp[i].start, sp[i].len, &t[k])) {
				k++;
				continue;
			}
			if (k > 0)
				rc = send_batch(cli, &bo, t, k, true);
			k = 0;
			print_bad_line(&bo, sp[i].lineno);
		}
		if (rc == 0 && k > 0)
			rc = send_batch(cli, &bo, t, k, true);
		if (rc != 0)
			break;
		if (lines_consume(&lr, off))
			break;
	}
	lines_free(&lr);
	return finish(&bo);
}
