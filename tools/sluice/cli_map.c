/* cli_map - `sluice map`: show the cluster map, set a prefix's cluster,
 * delete a prefix (docs/scaling.md); and `stats` in map mode, every
 * cluster's totals and their sum. Through a node (-s URL: the admin's
 * role with --auth), or, with -s etcd://..., through etcd directly. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"

static const char map_usage[] =
    "usage: sluice map show [--json]\n"
    "       sluice map set PREFIX CLUSTER [--draining CLUSTER]... [--json]\n"
    "       sluice map delete PREFIX [--json]\n";
static const char map_help[] =
    "\nThe cluster map: which cluster owns which tubes, when several\n"
    "clusters share one etcd (sluiced --etcd --cluster NAME). A tube\n"
    "belongs to the cluster of the longest PREFIX that starts its name;\n"
    "PREFIX '' (an empty argument) is the default, for every other tube.\n"
    "A node refuses a put or take of a tube the map gives to another\n"
    "cluster (error moved, naming that cluster and its members); with -s\n"
    "etcd://HOST:PORT or --map, put, take and stats route by the map.\n\n"
    "  show               the entries, the map's revision, and each\n"
    "                     cluster's leader and members\n"
    "  set PREFIX CLUSTER map PREFIX to CLUSTER (1-64 bytes of\n"
    "                     A-Z a-z 0-9 _ . : -)\n"
    "      --draining C   C still holds tasks of the tubes: its nodes go\n"
    "                     on handing them out, and take no new puts\n"
    "                     (repeat, up to 8)\n"
    "  delete PREFIX      remove the entry of PREFIX\n"
    "      --json         print the result as JSON\n\n"
    "Through a node, set and delete need the admin's token with --auth,\n"
    "and go to its cluster's leader. Each change is one etcd\n"
    "transaction; every node learns it within a second. Example:\n\n"
    "  sluice -s tcp://10.0.0.1:7711 map set '' c1\n"
    "  sluice -s tcp://10.0.0.1:7711 map set billing. c2\n"
    "  sluice -s tcp://10.0.0.1:7711 --map put -t billing.eu hello\n";

static void
print_map(const struct sluice_cluster_map *m, bool json)
{
	if (json) {
		printf("{\"revision\":%" PRIu64 ",\"entries\":[", m->revision);
		for (size_t i = 0; i < m->n; i++) {
			const struct sluice_map_entry *e = &m->entries[i];

			printf("%s{\"prefix\":", i ? "," : "");
			cli_json_cstr(stdout, e->prefix);
			fputs(",\"cluster\":", stdout);
			cli_json_cstr(stdout, e->cluster);
			fputs(",\"draining\":[", stdout);
			for (size_t k = 0; k < e->ndraining; k++) {
				if (k)
					putchar(',');
				cli_json_cstr(stdout, e->draining[k]);
			}
			fputs("]}", stdout);
		}
		fputs("],\"clusters\":[", stdout);
		for (size_t i = 0; i < m->nclusters; i++) {
			const struct sluice_map_cluster *c = &m->clusters[i];

			printf("%s{\"name\":", i ? "," : "");
			cli_json_cstr(stdout, c->name);
			fputs(",\"leader\":", stdout);
			cli_json_cstr(stdout, c->leader);
			fputs(",\"urls\":", stdout);
			cli_json_cstr(stdout, c->urls);
			putchar('}');
		}
		fputs("]}\n", stdout);
		return;
	}
	printf("revision %" PRIu64 "\n", m->revision);
	printf("%-30s %-20s %s\n", "PREFIX", "CLUSTER", "DRAINING");
	for (size_t i = 0; i < m->n; i++) {
		const struct sluice_map_entry *e = &m->entries[i];

		printf("%-30s %-20s ", e->prefix[0] ? e->prefix : "(default)",
		    e->cluster);
		for (size_t k = 0; k < e->ndraining; k++)
			printf("%s%s", k ? "," : "", e->draining[k]);
		printf("%s\n", e->ndraining ? "" : "-");
	}
	if (m->nclusters > 0)
		printf("\n%-20s %-30s %s\n", "CLUSTER", "LEADER", "MEMBERS");
	for (size_t i = 0; i < m->nclusters; i++) {
		const struct sluice_map_cluster *c = &m->clusters[i];

		printf("%-20s %-30s %s\n", c->name,
		    c->leader[0] ? c->leader : "-", c->urls[0] ? c->urls : "-");
	}
}

static int
cmd_map(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "draining", required_argument, NULL, OPT_DRAINING },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "h", opts };
	const char *draining[8];
	size_t nd = 0;
	const char *verb;
	uint64_t rev = 0;
	int ch, rc, nargs;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		if (ch == OPT_DRAINING) {
			if (nd == 8)
				return cli_usage_error(
				    cli, "at most 8 --draining clusters");
			draining[nd++] = optarg;
		}
	}
	if (a.stop)
		return a.status;
	if (optind == argc)
		return cli_usage_error(cli, "show, set or delete is needed");
	verb = argv[optind++];
	nargs = argc - optind;
	if (strcmp(verb, "show") == 0) {
		struct sluice_cluster_map *m;

		if (nargs != 0 || nd != 0)
			return cli_usage_error(cli, "show takes no arguments");
		if ((rc = cli_connect_routed(cli)) != 0)
			return rc;
		rc = cli->c == NULL ? sluice_router_map(cli->r, &m)
		                    : sluice_map_read(cli->c, &m);
		if (rc != 0)
			return cli_fail(cli, rc, "map show");
		print_map(m, a.json);
		sluice_cluster_map_free(m);
		return EXIT_OK;
	}
	if (strcmp(verb, "set") == 0) {
		if (nargs != 2)
			return cli_usage_error(cli,
			    "set takes PREFIX and CLUSTER ('' is the default "
			    "prefix)");
		if ((rc = cli_connect_routed(cli)) != 0)
			return rc;
		rc = cli->c == NULL
		    ? sluice_router_map_set(cli->r, argv[optind],
		          argv[optind + 1], draining, nd, &rev)
		    : sluice_map_set(cli->c, argv[optind], argv[optind + 1],
		          draining, nd, &rev);
		if (rc != 0)
			return cli_fail(cli, rc, "map set '%s'", argv[optind]);
		if (a.json)
			printf("{\"revision\":%" PRIu64 "}\n", rev);
		else
			printf("mapped '%s' to %s, revision %" PRIu64 "\n",
			    argv[optind], argv[optind + 1], rev);
		return EXIT_OK;
	}
	if (strcmp(verb, "delete") == 0) {
		if (nargs != 1 || nd != 0)
			return cli_usage_error(cli,
			    "delete takes PREFIX ('' is the default prefix)");
		if ((rc = cli_connect_routed(cli)) != 0)
			return rc;
		rc = cli->c == NULL
		    ? sluice_router_map_delete(cli->r, argv[optind], &rev)
		    : sluice_map_delete(cli->c, argv[optind], &rev);
		if (rc != 0)
			return cli_fail(
			    cli, rc, "map delete '%s'", argv[optind]);
		if (a.json)
			printf("{\"revision\":%" PRIu64 "}\n", rev);
		else
			printf("deleted '%s', revision %" PRIu64 "\n",
			    argv[optind], rev);
		return EXIT_OK;
	}
	return cli_usage_error(
	    cli, "unknown \"%s\": show, set or delete", verb);
}

CLI_COMMAND(map, cmd_map);

int
cli_map_stats(struct cli *cli, const char *tube, bool json)
{
	struct sluice_router_stats *s;
	int rc, status = EXIT_OK;

	if ((rc = sluice_router_stats(cli->r, tube, &s)) != 0)
		return cli_fail(cli, rc, "stats");
	if (json) {
		printf("{\"ready\":%" PRIu64 ",\"delayed\":%" PRIu64
		       ",\"taken\":%" PRIu64 ",\"buried\":%" PRIu64
		       ",\"clusters\":[",
		    s->ready, s->delayed, s->taken, s->buried);
	} else {
		printf("%-20s %10s %10s %10s %10s\n", "CLUSTER", "READY",
		    "DELAYED", "TAKEN", "BURIED");
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct sluice_stats *st = s->per[i].stats;
		struct sluice_tube_stats z = { 0 };
		const struct sluice_tube_stats *t = st ? &st->totals : &z;

		if (s->per[i].rc != 0) {
			status = EXIT_ERR;
			fprintf(stderr, "sluice: stats: cluster %s: %s\n",
			    s->per[i].cluster, sluice_strerror(s->per[i].rc));
		}
		if (json) {
			printf("%s{\"cluster\":", i ? "," : "");
			cli_json_cstr(stdout, s->per[i].cluster);
			printf(",\"code\":%d,\"ready\":%" PRIu64
			       ",\"delayed\":%" PRIu64 ",\"taken\":%" PRIu64
			       ",\"buried\":%" PRIu64 "}",
			    s->per[i].rc, t->ready, t->delayed, t->taken,
			    t->buried);
		} else {
			printf("%-20s %10" PRIu64 " %10" PRIu64 " %10" PRIu64
			       " %10" PRIu64 "\n",
			    s->per[i].cluster, t->ready, t->delayed, t->taken,
			    t->buried);
		}
	}
	if (json)
		fputs("]}\n", stdout);
	else
		printf("%-20s %10" PRIu64 " %10" PRIu64 " %10" PRIu64
		       " %10" PRIu64 "\n",
		    "(all)", s->ready, s->delayed, s->taken, s->buried);
	sluice_router_stats_free(s);
	return status;
}
