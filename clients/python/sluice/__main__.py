"""python -m sluice worker MODULE:ATTRIBUTE [options]

Runs the sluice.Worker named by MODULE:ATTRIBUTE (imported as Python
imports it, the current directory first) until SIGTERM or SIGINT, then
stops gracefully and exits 0. Options override the worker's own:
--url URL[,URL...], --concurrency N, --grace DUR, and, as `sluice work`
has them, --max-tasks N (stop after N tasks) and --wait DUR (stop once no
task came for DUR); the token is read from $SLUICE_TOKEN when the worker
has none.

A DUR is read as sluice and sluiced read one: a number with a unit, ms,
s, m, h or d (500ms, 2s, 1.5m, 1h, 30d), or 0. A bare number other than 0
is refused with the two readings ("--wait 30: a duration needs a unit:
say 30s or 30000ms ..."), exit status 2.
"""

import argparse
import importlib
import logging
import os
import sys

from .codec import parse_duration
from .worker import Worker


def _seconds(text):
    """An argparse type: a duration (DUR) as seconds, or a usage error
    naming what was typed (argparse names the option before it)."""
    try:
        return parse_duration(text) / 1000.0
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def _count(text):
    """An argparse type: a whole number >= 1."""
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(
            "a whole number of at least 1, not %r" % text)
    return int(text)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m sluice")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser(
        "worker", help="run a sluice.Worker of a module",
        epilog="DUR is a number with a unit, ms, s, m, h or d (500ms, 2s, "
        "1.5m, 1h, 30d), or 0; a bare number other than 0 is refused.")
    w.add_argument("target", metavar="MODULE:ATTRIBUTE",
                   help="the Worker, e.g. tasks:worker")
    w.add_argument("--url", help="the server(s): tcp://HOST:PORT[,...]")
    w.add_argument("--concurrency", type=int, help="threads")
    w.add_argument("--grace", type=_seconds, metavar="DUR",
                   help="how long running tasks get after a stop (default "
                   "30s)")
    w.add_argument("--max-tasks", type=_count, metavar="N",
                   help="stop after N tasks")
    w.add_argument("--wait", type=_seconds, metavar="DUR",
                   help="stop once no task came for DUR")
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
