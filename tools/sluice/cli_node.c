/* cli_node - the node's role and its cluster: snapshot (write one now),
 * promote (the follower becomes a leader), follow (follow a leader), and,
 * with automatic failover (sluiced --etcd), cluster (the members as the
 * node sees them) and switchover (the leadership handed to a member). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_util.h"

static const char snapshot_usage[] = "usage: sluice snapshot [--json]\n";
static const char snapshot_help[] =
    "\nAsks the server to write a snapshot now; prints the last LSN it "
    "covers.\n\n"
    "      --json   print {\"lsn\":N}\n";
static const char promote_usage[] = "usage: sluice promote [--json]\n";
static const char promote_help[] =
    "\nTurns the follower at -s URL into a leader with a new epoch; prints "
    "the\nepoch. Give the follower's URL alone: with several, the first "
    "that\nanswers is promoted. Then point the other followers at it with\n"
    "`sluice -s FOLLOWER follow LEADER_REPL_URL`.\n\n"
    "      --json   print {\"epoch\":N}\n";

/* snapshot and promote: no argument, one number back. */
static int
cmd_node(struct cli *cli, int argc, char **argv)
{
	bool json = false, snap = strcmp(cli->cmd, "snapshot") == 0;
	uint64_t v;
	int rc;

	if ((rc = cli_simple_args(cli, argc, argv, 0, &json)) >= 0)
		return rc;
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	rc = snap ? sluice_snapshot(cli->c, &v) : sluice_promote(cli->c, &v);
	if (rc != 0)
		return cli_fail(cli, rc, "%s", cli->cmd);
	cli_print_number(json, snap ? "lsn" : "epoch",
	    snap ? "snapshot written, up to lsn" : "promoted, epoch", v);
	return EXIT_OK;
}

static const char follow_usage[] = "usage: sluice follow URL [--json]\n";
static const char follow_help[] =
    "\nMakes the node at -s URL follow the leader whose replication URL is\n"
    "URL (the leader's --repl-listen).\n\n"
    "      --json   print {\"following\":URL}\n";

static int
cmd_follow(struct cli *cli, int argc, char **argv)
{
	bool json = false;
	int rc;

	if ((rc = cli_simple_args(cli, argc, argv, 1, &json)) >= 0 ||
	    (rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_follow(cli->c, argv[optind])) != 0)
		return cli_fail(cli, rc, "follow %s", argv[optind]);
	if (json) {
		fputs("{\"following\":", stdout);
		cli_json_cstr(stdout, argv[optind]);
		fputs("}\n", stdout);
	} else {
		printf("following %s\n", argv[optind]);
	}
	return EXIT_OK;
}

static const char cluster_usage[] = "usage: sluice cluster [--json]\n";
static const char cluster_help[] =
    "\nShows the cluster as the node at -s URL sees it in etcd (any node\n"
    "answers, leader or follower): one row per member, the leader marked\n"
    "\"*\": its role (leader, follower, candidate: no leader known yet,\n"
    "fenced: a leader that stopped writing; down: its key not refreshed\n"
    "for 3 s, or gone), epoch, durable LSN, lag in records, SYNC (counted\n"
    "for --sync-replicas, so it may take over), the leader's lease and\n"
    "when the member last published its key. The holder of the leader\n"
    "key is the leader, even before its own key says so. A member whose\n"
    "key is gone stays, down, until it leaves the sync set and 5 minutes\n"
    "pass, or comes back. The node's last failed etcd call, if any,\n"
    "follows the table. A node started without --etcd answers that\n"
    "automatic failover is off. With a cluster map (-s etcd://... or\n"
    "--map, and no --cluster): every cluster the map names, one after\n"
    "the other (--json: {\"clusters\":[...]}).\n\n"
    "      --json   print {\"cluster\":NAME,\"node\":NAME,\"leader\":NAME,\n"
    "               \"ttl_ms\":N,\"etcd_error\":TEXT,\"members\":[...]}\n";

/* In map mode: the view of every cluster the map names, one after the
 * other (with --json, {"clusters":[...]}). */
static int
every_cluster(struct cli *cli, bool json)
{
	struct sluice_cluster_map *m;
	int rc, status = EXIT_OK;
	size_t shown = 0;

	if ((rc = sluice_router_map(cli->r, &m)) != 0)
		return cli_fail(cli, rc, "cluster");
	if (json)
		fputs("{\"clusters\":[", stdout);
	for (size_t i = 0; i < m->nclusters; i++) {
		struct sluice_client *c;
		struct sluice_cluster *cl;
		const char *name = m->clusters[i].name;

		if ((rc = sluice_router_cluster(cli->r, name, &c)) == 0)
			rc = sluice_cluster(c, &cl);
		if (rc != 0) {
			fprintf(stderr, "sluice: cluster %s: %s\n", name,
			    sluice_strerror(rc));
			status = EXIT_ERR;
			continue;
		}
		if (shown++ > 0)
			putchar(json ? ',' : '\n');
		cli_print_cluster(stdout, cl, json);
		sluice_cluster_free(cl);
	}
	if (json)
		fputs("]}\n", stdout);
	sluice_cluster_map_free(m);
	return status;
}

static int
cmd_cluster(struct cli *cli, int argc, char **argv)
{
	struct sluice_cluster *cl;
	bool json = false;
	int rc;

	if ((rc = cli_simple_args(cli, argc, argv, 0, &json)) >= 0 ||
	    (rc = cli_connect_routed(cli)) != 0)
		return rc;
	if (cli->c == NULL)
		return every_cluster(cli, json);
	if ((rc = sluice_cluster(cli->c, &cl)) != 0)
		return cli_fail(cli, rc, "cluster");
	cli_print_cluster(stdout, cl, json);
	sluice_cluster_free(cl);
	return EXIT_OK;
}

static const char switchover_usage[] =
    "usage: sluice switchover NODE [--timeout DUR] [--json]\n";
static const char switchover_help[] =
    "\nHands the leadership to the member NODE (its --node): the leader "
    "stops\ntaking writes, waits until NODE holds everything it wrote, "
    "then lets\nonly NODE take its lease; prints the new leader once NODE "
    "leads. Sent\nto a follower, it goes to the leader.\n\n"
    "      --timeout DUR   how long the leader waits for NODE to catch up\n"
    "                      (default: the server's); past it, the old\n"
    "                      leader keeps leading\n"
    "      --json          print {\"node\":NODE,\"leader\":URL,"
    "\"epoch\":N}\n";

static int
cmd_switchover(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		COMMON_OPTS,
	};
	struct cli_args a = { argc, argv, "h", opts };
	struct sluice_switchover_result res;
	uint64_t ms = 0;
	const char *node;
	int ch, rc;

	while ((ch = cli_next_opt(cli, &a)) != -1) {
		if (ch == OPT_TIMEOUT &&
		    (rc = cli_parse_ms(cli, "--timeout", optarg, 1, &ms)) != 0)
			return rc;
	}
	if (a.stop)
		return a.status;
	if (argc - optind != 1)
		return cli_usage_error(cli, "one NODE is needed");
	node = argv[optind];
	if (node[0] == '\0' || strlen(node) > SLUICE_NODE_MAX)
		return cli_usage_error(cli,
		    "NODE is a member's name (its --node), 1-64 bytes; not "
		    "\"%s\"",
		    node);
	if (ms > UINT32_MAX)
		return cli_usage_error(cli, "--timeout is at most 49d");
	if ((rc = cli_connect(cli)) != 0)
		return rc;
	if ((rc = sluice_switchover(cli->c, node, (uint32_t)ms, &res)) != 0)
		return cli_fail(cli, rc, "switchover %s", node);
	if (a.json) {
		fputs("{\"node\":", stdout);
		cli_json_cstr(stdout, node);
		fputs(",\"leader\":", stdout);
		cli_json_cstr(stdout, res.leader);
		printf(",\"epoch\":%" PRIu64 "}\n", res.epoch);
	} else {
		printf("%s leads now (epoch %" PRIu64 ", %s)\n", node,
		    res.epoch, res.leader);
	}
	return EXIT_OK;
}

CLI_COMMAND(snapshot, cmd_node);

CLI_COMMAND(promote, cmd_node);

CLI_COMMAND(follow, cmd_follow);

CLI_COMMAND(cluster, cmd_cluster);

CLI_COMMAND(switchover, cmd_switchover);
