/* sluiced - the sluice server's main: re-executes itself with huge pages
 * for the heap, reads the flags (flags.c), checks the TLS files and every
 * address before the data directory is touched (preflight.c), raises the
 * descriptor limit, then runs the server (srv.c) until it stops. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "server/flags.h"
#include "server/preflight.h"
#include "server/srv.h"
#include "util/clock.h"
#include "util/fault.h"
#include "util/log.h"
#include "util/tlsfile.h"

/* Fresh memory costs a page fault per 4 KiB page: a third to a half of a
 * restart's time at millions of tasks, and of each background snapshot's
 * rebuild. glibc's malloc.hugetlb tunable backs the heap with transparent
 * huge pages, 512 times fewer faults (docs/benchmarks.md). Tunables are
 * read only at start, so the server re-executes itself once with it set
 * (SLUICE_NO_HUGEPAGES=1 keeps the heap as it is). Built with
 * AddressSanitizer, whose allocator stands in for glibc's, the tunable
 * would change nothing, and a second start would cost the sanitizer's
 * set-up twice. */
#ifdef __SANITIZE_ADDRESS__
enum { SANITIZED = 1 };
#else
enum { SANITIZED = 0 };
#endif

static void
reexec_with_hugepages(char **argv)
{
	const char *cur = getenv("GLIBC_TUNABLES");
	char buf[1024];

	if (SANITIZED || getenv("SLUICE_NO_HUGEPAGES") != NULL ||
	    (cur != NULL && strstr(cur, "glibc.malloc.hugetlb") != NULL))
		return;
	snprintf(buf, sizeof(buf), "%s%sglibc.malloc.hugetlb=1", cur ? cur : "",
	    cur && *cur ? ":" : "");
	if (setenv("GLIBC_TUNABLES", buf, 1) != 0)
		return;
	execv("/proc/self/exe", argv);
	/* Not fatal: run with small pages. */
}

/* Every connection is a descriptor: the soft limit (often 1024, as
 * systemd's default LimitNOFILE) is raised to the hard one, as far as
 * the kernel allows, and the result logged. */
static void
raise_nofile(void)
{
	struct rlimit rl;
	rlim_t was;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	was = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			log_warn("srv",
			    "cannot raise the descriptor limit to the hard "
			    "limit limit=%llu hard=%llu error=\"%s\"",
			    (unsigned long long)was,
			    (unsigned long long)rl.rlim_max, strerror(errno));
			return;
		}
		log_info("srv",
		    "descriptor limit raised to the hard limit was=%llu "
		    "limit=%llu",
		    (unsigned long long)was, (unsigned long long)rl.rlim_cur);
		return;
	}
	log_info("srv", "descriptor limit limit=%llu (the hard limit)",
	    (unsigned long long)rl.rlim_cur);
}

int
main(int argc, char **argv)
{
	struct config cfg;
	struct tlsfile tls = { 0 };
	sigset_t sigs;
	int rc;

	reexec_with_hugepages(argv);
#ifdef SLUICE_FAULT
	/* Test builds only (sluiced-fault): arm a fault point of the log. */
	if (fault_arm_spec(getenv("SLUICE_FAULT")) != 0) {
		fprintf(stderr, "sluiced: bad SLUICE_FAULT '%s'\n",
		    getenv("SLUICE_FAULT"));
		return 2;
	}
	/* And a pause point: "recover:MS" holds recovery open MS ms. */
	if (fault_arm_pause_spec(getenv("SLUICE_FAULT_PAUSE")) != 0) {
		fprintf(stderr, "sluiced: bad SLUICE_FAULT_PAUSE '%s'\n",
		    getenv("SLUICE_FAULT_PAUSE"));
		return 2;
	}
	/* And a wall clock ahead of the system's by SLUICE_CLOCK_SHIFT_MS,
	 * so that a test meets a schedule's slot within a second or two. */
	if (getenv("SLUICE_CLOCK_SHIFT_MS") != NULL)
		clock_shift_set(
		    strtoll(getenv("SLUICE_CLOCK_SHIFT_MS"), NULL, 10));
#endif
	flags_defaults(&cfg);
	rc = flags_parse(argc, argv, &cfg);
	if (rc != 0)
		return rc;
	/* Before anything is written: a start bound to fail for a TLS
	 * file or an address fails here, with the data directory untouched. The
	 * check starts nng's threads, which must inherit the mask srv_run sets
	 * (SIGINT, SIGTERM and SIGUSR1 blocked: the core reads them from a
	 * signalfd), or
	 * a signal would end the process in one of them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGUSR1);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	if (flags_load_tls(&cfg, &tls) != 0 || preflight_check(&cfg) != 0)
		return 1;
	raise_nofile();
	rc = srv_run(&cfg);
	tlsfile_fini(&tls);
	return rc;
}