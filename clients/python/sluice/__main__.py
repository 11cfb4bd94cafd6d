"""python -m sluice worker MODULE:ATTRIBUTE [options]

Runs the sluice.Worker named by MODULE:ATTRIBUTE (imported as Python
imports it, the current directory first) until SIGTERM or SIGINT, then
stops gracefully and exits 0. Options override the worker's own:
--url URL[,URL...], --concurrency N, --grace SECONDS, and, as `sluice
work` has them, --max-tasks N (stop after N tasks) and --wait SECONDS
(stop once no task came for SECONDS); the token is read from
$SLUICE_TOKEN when the worker has none.
"""

import argparse
import importlib
import logging
import os
import sys

from .worker import Worker


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m sluice")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("worker", help="run a sluice.Worker of a module")
    w.add_argument("target", metavar="MODULE:ATTRIBUTE",
                   help="the Worker, e.g. tasks:worker")
    w.add_argument("--url", help="the server(s): tcp://HOST:PORT[,...]")
    w.add_argument("--concurrency", type=int, help="threads")
    w.add_argument("--grace", type=float,
                   help="seconds running tasks get after a stop")
    w.add_argument("--max-tasks", type=int, metavar="N",
                   help="stop after N tasks")
    w.add_argument("--wait", type=float, metavar="SECONDS",
                   help="stop once no task came for SECONDS")
    w.add_argument("-v", "--verbose", action="store_true")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else
                        logging.WARNING,
                        format="%(asctime)s %(name)s %(message)s")
    module, _, attr = args.target.partition(":")
    if not module or not attr:
        p.error("%s: expected MODULE:ATTRIBUTE" % args.target)
    sys.path.insert(0, os.getcwd())
    try:
        worker = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as e:
        print("python -m sluice: %s: %s" % (args.target, e), file=sys.stderr)
        return 2
    if not isinstance(worker, Worker):
        print("python -m sluice: %s is not a sluice.Worker" % args.target,
              file=sys.stderr)
        return 2
    if args.url:
        worker.urls = args.url
    if args.concurrency:
        worker.concurrency = args.concurrency
    if args.grace is not None:
        worker.grace = args.grace
    if args.max_tasks is not None:
        worker.max_tasks = args.max_tasks
    if args.wait is not None:
        worker.idle = args.wait
    if worker.client_options.get("token") is None:
        worker.client_options["token"] = os.environ.get("SLUICE_TOKEN")
    return worker.run()


if __name__ == "__main__":
    sys.exit(main())
