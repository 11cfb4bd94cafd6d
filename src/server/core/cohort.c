/* cohort - a group commit that waits for the clients it answered
 * (cohort.h). */
#include "server/core/cohort.h"

static int64_t
limit_ns(int64_t commit_ns)
{
	return commit_ns < COHORT_HOLD_MAX_NS ? commit_ns : COHORT_HOLD_MAX_NS;
}

void
cohort_answered(struct cohort *h, uint32_t n)
{
	h->answered = n;
}

bool
cohort_hold(
    struct cohort *h, uint32_t waiting, int64_t now_ns, int64_t commit_ns)
{
	bool gathered = h->since_ns != 0 && waiting > h->at_start;

	if (waiting == 0 || waiting >= h->answered || h->answered < 2 ||
	    limit_ns(commit_ns) <= 0) {
		if (h->since_ns != 0 && waiting >= h->answered) {
			h->filled++;
			h->backoff = 1;
		}
		h->since_ns = 0;
		return false;
	}
	if (h->skip > 0) {
		h->skip--; /* this commit goes now: answered is 0 after it */
		return false;
	}
	if (h->since_ns == 0) {
		h->since_ns = now_ns;
		h->at_start = waiting;
		h->holds++;
		return true;
	}
	if (now_ns - h->since_ns < limit_ns(commit_ns))
		return true;
	h->ran_out++;
	h->since_ns = 0;
	if (gathered) {
		h->backoff = 1; /* some came: worth holding again */
		return false;
	}
	h->skip = h->backoff > 0 ? h->backoff : 1;
	h->backoff =
	    h->skip * 2 < COHORT_SKIP_MAX ? h->skip * 2 : COHORT_SKIP_MAX;
	return false;
}

void
cohort_submitted(struct cohort *h)
{
	h->since_ns = 0;
	h->answered = 0; /* until the commit answers its own */
}

void
cohort_cancel(struct cohort *h)
{
	h->since_ns = 0;
}

int64_t
cohort_deadline_ns(const struct cohort *h, int64_t commit_ns)
{
	return h->since_ns != 0 ? h->since_ns + limit_ns(commit_ns) : 0;
}
