/* cli_move - `sluice tube move TUBE CLUSTER`: a tube's tasks moved to
 * another cluster by libsluice's sluice_router_move (docs/scaling.md,
 * "Move a tube"). Through the map: -s etcd://... (or any node's URL,
 * which serves the map); re-running it resumes a move that was
 * interrupted. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"

enum { OPT_MOVE_WAIT = OPT_HELP + 1000, OPT_QUIET };

static void
progress(void *arg, const struct sluice_move_progress *p)
{
	(void)arg;
	if (p->done)
		return;
	if (p->stage != 0) {
		fprintf(stderr, "sluice: tube move: %s from %s to %s: %s\n",
		    p->tube, p->source, p->target,
		    p->stage == SLUICE_MOVE_KEYS_PENDING
		        ? "map changed; copying the keys of the tasks live "
		          "there "
		          "(keyed puts at the target wait)"
		        : "keys held at the target; keyed puts go on");
		return;
	}
	fprintf(stderr,
	    "sluice: tube move: %s from %s to %s: %" PRIu64
	    " tasks copied in %" PRIu64 " rounds%s\n",
	    p->tube, p->source, p->target, p->copied, p->batches,
	    p->waits > 0 ? ", waiting for taken tasks (or a workflow under "
	                   "way there)"
	                 : "");
}

int
cli_tube_move(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "wait", required_argument, NULL, OPT_MOVE_WAIT },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "h", opts };
	struct sluice_move_opts o = { 0 };
	struct sluice_move_progress p;
	uint64_t v;
	bool quiet = false;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		switch (ch) {
		case OPT_BATCH:
			if ((rc = cli_parse_num(
			         cli, "--batch", optarg, 1, 1000, &v)) != 0)
				return rc;
			o.batch = (uint32_t)v;
			break;
		case OPT_MOVE_WAIT:
			if ((rc = cli_parse_ms(cli, "--wait", optarg, 1, &v)) !=
			    0)
				return rc;
			o.wait_ms = (int64_t)v;
			break;
		case OPT_QUIET:
			quiet = true;
			break;
		default:
			return cli_bad_option(cli);
		}
	}
	if (a.stop)
		return a.status;
	/* operands after the word "move": TUBE CLUSTER */
	if (argc - optind != 3 || strcmp(argv[optind], "move") != 0)
		return cli_usage_error(cli, "move takes TUBE and CLUSTER");
	if (!quiet) {
		o.report = progress;
		o.report_arg = cli;
	}
	cli->map = true; /* a move goes by the map, whatever -s names */
	if ((rc = cli_connect_routed(cli)) != 0)
		return rc;
	if (cli->r == NULL)
		return cli_usage_error(
		    cli, "tube move works on the map: no --cluster with it");
	rc = sluice_router_move(
	    cli->r, argv[optind + 1], argv[optind + 2], &o, &p);
	if (rc != 0)
		return cli_fail(cli, rc, "tube move '%s' to %s",
		    argv[optind + 1], argv[optind + 2]);
	if (a.json) {
		fputs("{\"tube\":", stdout);
		cli_json_cstr(stdout, argv[optind + 1]);
		fputs(",\"cluster\":", stdout);
		cli_json_cstr(stdout, argv[optind + 2]);
		printf(",\"copied\":%" PRIu64 ",\"dropped\":%" PRIu64
		       ",\"keys\":%" PRIu64 ",\"groups\":%" PRIu64
		       ",\"revision\":%" PRIu64 "}\n",
		    p.copied, p.dropped, p.keys, p.groups, p.revision);
	} else {
		printf("moved '%s' to %s: %" PRIu64
		       " tasks copied, revision %" PRIu64 "\n",
		    argv[optind + 1], argv[optind + 2], p.copied, p.revision);
	}
	return EXIT_OK;
}
