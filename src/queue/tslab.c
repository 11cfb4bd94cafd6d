/* tslab - header-less slabs of task memory (tslab.h). A slab is
 * TSLAB_SLAB bytes mapped at a multiple of TSLAB_SLAB: its header, then
 * objects of one size. Invariants: a slab is in its class's room list
 * (listed) exactly when it has a free object or untouched room for one;
 * used counts the objects handed out and not given back; every object
 * below `bump` is either handed out or on the free list; `touched` is
 * what of the slab was touched and not given back: at least bump rounded
 * up to a page.
 *
 * Fresh memory costs its first touch: the kernel zeroes each page (on a
 * VM the host may back it then too), which is most of a replay's time.
 * So a class that has TSLAB_SPARE_FROM slabs (2 in a replay of many
 * tasks, tslab_expect) gets its next one made in advance (during such a
 * replay, up to TSLAB_AHEAD_LOAD of them, no more than the class has
 * slabs: one spare is not always ready in time), by a worker thread
 * (one per process, started at first need)
 * that maps it and faults it in (MADV_POPULATE_WRITE) while the caller
 * fills the slab before it: on another core, that zeroing runs beside
 * the replay instead of in it. The worker maps as well, or the caller's
 * mmap would wait for the mmap lock behind a populate. Its jobs are done
 * in order, each with a ticket; a class's spares are a ring in the pool
 * (slot and ticket), taken oldest first once the worker is done with
 * that one. When the worker is behind (a host slow to back memory), the
 * caller does not wait for it: it maps a slab and faults it itself, so
 * both cores fault, and a job not yet started is taken back when its
 * spare is no longer wanted. Nothing is written into a spare before: a
 * first write there would zero its huge page on the caller's thread. A
 * spare is counted as touched whole from its asking. A thread with a
 * nice value above 0 gets no spare: the worker, at the default priority,
 * would do its work ahead of it.
 *
 * On a VM that gives free memory back to its host (virtio-balloon free
 * page reporting, tslab_load_small), a load's slabs (from tslab_expect to
 * tslab_settle) are mapped in small pages, the worker's and the caller's
 * alike. Page reporting reports blocks of 2 MiB and up, so a huge page is
 * most likely such a block, and the host backs it again at its first
 * touch: in busy spells several times slower than small pages, which
 * come from what the guest still holds (2 GiB faulted in: 1.1-1.7 s
 * small, 4.5-5.3 s huge, in the same minute). While the host backs memory
 * fast, huge pages are the faster (a restart's fast rounds at 10M by
 * 0.1-0.4 s on a busy machine), but a restart's worst rounds are the slow
 * spells' (docs/benchmarks.md, "Restart at 10M in every round"); a choice
 * by the time the worker took for its last huge slab was tried, and did
 * no better than small pages. tslab_settle then marks the load's slabs
 * for huge pages (MADV_HUGEPAGE), which khugepaged gathers in the
 * background, and slabs made after the load are huge from the start, as
 * before. Without page reporting a load's slabs are huge.
 *
 * During a load the worker also faults in ranges asked for ahead of
 * their first touch (tslab_prefault: the heaps sized for a snapshot's
 * tasks), in the order asked, among the spares. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "queue/tslab.h"

enum {
	TSLAB_SLAB = 2u << 20,
	TSLAB_PAGE = 4096,
	TSLAB_HDR = 64,
	/* An emptied slab that is kept gives back its pages beyond this. */
	TSLAB_KEEP = 16u << 10,
	/* Spares are made for a class from this many slabs on (128 MiB): a
	 * spare's 2 MiB is then at most 1/64 more. */
	TSLAB_SPARE_FROM = 64,
	/* tslab_prefault leaves smaller ranges to their first touch. */
	TSLAB_PREFAULT_MIN = 2u << 20,
};

struct tslab {
	struct tslab *prev; /* in its class's room list */
	struct tslab *next;
	struct tslab *aprev; /* in the pool's list of every slab */
	struct tslab *anext;
	void *free;       /* given-back objects, linked by their first word */
	uint32_t size;    /* of its objects */
	uint32_t used;    /* objects handed out */
	uint32_t bump;    /* offset of the first untouched byte */
	uint32_t touched; /* bump rounded up to a page */
	uint16_t cls;
	bool listed;
	bool small; /* mapped in small pages during a load (see slab_new) */
};

_Static_assert(sizeof(struct tslab) <= TSLAB_HDR, "slab header too large");
_Static_assert(TSLAB_AHEAD_LOAD <= 8, "spare_small holds 8 slots a class");

static atomic_size_t tslab_total;

size_t
tslab_bytes(void)
{
	return atomic_load_explicit(&tslab_total, memory_order_relaxed);
}

void
tslab_init(struct tslab_pool *p)
{
	for (int i = 0; i < TSLAB_CLASSES; i++) {
		p->room[i] = NULL;
		p->nslabs[i] = 0;
		p->nspare[i] = 0;
		p->spare_head[i] = 0;
		p->spare_small[i] = 0;
	}
	p->all = NULL;
	p->spare_from = TSLAB_SPARE_FROM;
	p->spare_ahead = 1;
	p->touched = 0;
}

void
tslab_expect(struct tslab_pool *p, uint64_t objects)
{
	if (objects >= TSLAB_EXPECT_MANY) {
		p->spare_from = 2;
		p->spare_ahead = TSLAB_AHEAD_LOAD;
	}
}

#if defined(__SANITIZE_ADDRESS__)

void
tslab_fini(struct tslab_pool *p)
{
	(void)p;
}

void
tslab_settle(struct tslab_pool *p)
{
	p->spare_ahead = 1;
}

void
tslab_fill_hold(bool hold)
{
	(void)hold;
}

bool
tslab_load_small(void)
{
	return false;
}

void
tslab_prefault(struct tslab_pool *p, const void *addr, size_t len)
{
	(void)p;
	(void)addr;
	(void)len;
}

void *
tslab_alloc(struct tslab_pool *p, size_t size)
{
	(void)p;
	return aligned_alloc(
	    TSLAB_ALIGN, (size + TSLAB_ALIGN - 1) & ~(size_t)(TSLAB_ALIGN - 1));
}

void
tslab_free(struct tslab_pool *p, void *obj, size_t size)
{
	(void)p;
	(void)size;
	free(obj);
}

#else

static void
account(struct tslab_pool *p, ptrdiff_t delta)
{
	p->touched += (size_t)delta;
	if (delta >= 0)
		atomic_fetch_add_explicit(
		    &tslab_total, (size_t)delta, memory_order_relaxed);
	else
		atomic_fetch_sub_explicit(
		    &tslab_total, (size_t)-delta, memory_order_relaxed);
}

static struct tslab *
slab_of(const void *obj)
{
	return (struct tslab *)((uintptr_t)obj & ~(uintptr_t)(TSLAB_SLAB - 1));
}

static struct tslab *slab_map(bool huge);

/* The worker and its jobs (spare slabs to map and fault in, each into
 * the pool's slot `out`: mapping there too, the caller's thread never
 * waits for the mmap lock behind a populate). Jobs
 * are done in the order they come, each with a ticket (counting from 1,
 * 0 skipped: 0 is no job): a job is done once `done`, the ticket of the
 * last job done, has reached its own. */
enum { FILL_JOBS = 64 };

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool started;
	bool failed; /* no thread: spares are not made */
	pid_t pid;   /* the process the thread runs in (not a fork's child) */
	struct tslab **job[FILL_JOBS];
	uint32_t job_ticket[FILL_JOBS];
	bool job_huge[FILL_JOBS];
	uint8_t *job_addr[FILL_JOBS]; /* a range to fault in (tslab_prefault) */
	size_t job_len[FILL_JOBS];    /* its length; 0: a spare slab */
	unsigned head;
	unsigned n;
	bool held;                  /* tslab_fill_hold: no job started */
	uint32_t submitted;         /* the last ticket given */
	atomic_uint_least32_t done; /* the ticket of the last job done */
} fill = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* Reads a byte of every page of [addr, addr + len), from this thread.
 * Where the host backs a process's page at its first access from user
 * mode (a VM that shadows the guest's page tables), a populate leaves that
 * cost, about 6 us a page, to the next thread to touch the page: the
 * caller filling the slab. A read here pays it beside the caller. */
static void
touch_pages(const uint8_t *addr, size_t len)
{
	for (size_t off = 0; off < len; off += TSLAB_PAGE)
		(void)*(const volatile uint8_t *)(addr + off);
}

static void *
fill_main(void *arg)
{
	(void)arg;
	(void)pthread_setname_np(pthread_self(), "task-fill");

	for (;;) {
		struct tslab **out, *s;
		uint8_t *addr;
		size_t len;
		uint32_t t;
		bool huge;

		pthread_mutex_lock(&fill.mu);
		while (fill.n == 0 || fill.held)
			pthread_cond_wait(&fill.cv, &fill.mu);
		out = fill.job[fill.head];
		t = fill.job_ticket[fill.head];
		huge = fill.job_huge[fill.head];
		addr = fill.job_addr[fill.head];
		len = fill.job_len[fill.head];
		fill.head = (fill.head + 1) % FILL_JOBS;
		fill.n--;
		pthread_mutex_unlock(&fill.mu);
#ifdef MADV_POPULATE_WRITE
		/* A slab at a time: a populate holds the mmap lock, which
		 * the loader's mmap of a slab of its own waits for. Fails
		 * harmlessly on memory given back since. */
		for (size_t off = 0; off < len; off += TSLAB_SLAB)
			(void)madvise(addr + off,
			    len - off < TSLAB_SLAB ? len - off : TSLAB_SLAB,
			    MADV_POPULATE_WRITE);
#endif
		if (len == 0 && out != NULL) { /* NULL: cancelled */
			s = slab_map(huge);
#ifdef MADV_POPULATE_WRITE
			if (s != NULL)
				(void)madvise(
				    s, TSLAB_SLAB, MADV_POPULATE_WRITE);
#endif
			if (s != NULL)
				touch_pages((const uint8_t *)s, TSLAB_SLAB);
			*out = s; /* published with done */
		}
		atomic_store_explicit(&fill.done, t, memory_order_release);
	}
	return NULL;
}

/* Asks the worker for a spare slab into *out, its ticket in *ticket, in
 * huge pages or not (or, with len > 0, to fault in len bytes at addr: out
 * and ticket NULL); false when it cannot take the job (no thread, or its
 * jobs are full). */
static bool
fill_submit(
    struct tslab **out, uint32_t *ticket, bool huge, uint8_t *addr, size_t len)
{
	bool ok = false;

	pthread_mutex_lock(&fill.mu);
	if (!fill.started && !fill.failed) {
		pthread_t thr;
		pthread_attr_t a;

		fill.failed = pthread_attr_init(&a) != 0;
		if (!fill.failed) {
			(void)pthread_attr_setdetachstate(
			    &a, PTHREAD_CREATE_DETACHED);
			fill.failed =
			    pthread_create(&thr, &a, fill_main, NULL) != 0;
			pthread_attr_destroy(&a);
		}
		fill.started = !fill.failed;
		fill.pid = getpid();
	}
	if (fill.started && fill.n < FILL_JOBS) {
		unsigned j = (fill.head + fill.n) % FILL_JOBS;

		if (++fill.submitted == 0)
			fill.submitted = 1; /* 0 is no ticket */
		if (ticket != NULL)
			*ticket = fill.submitted;
		fill.job_ticket[j] = fill.submitted;
		fill.job_huge[j] = huge;
		fill.job_addr[j] = addr;
		fill.job_len[j] = len;
		if (out != NULL)
			*out = NULL;
		fill.job[j] = out;
		fill.n++;
		pthread_cond_signal(&fill.cv);
		ok = true;
	}
	pthread_mutex_unlock(&fill.mu);
	return ok;
}

void
tslab_fill_hold(bool hold)
{
	pthread_mutex_lock(&fill.mu);
	fill.held = hold;
	pthread_cond_broadcast(&fill.cv);
	pthread_mutex_unlock(&fill.mu);
}

/* Takes back the job that would make the spare *out, if the worker has
 * not started it: true when it will not be made (nothing to unmap, nothing
 * to wait for), false when it is under way or done. */
static bool
fill_cancel(struct tslab **out)
{
	bool hit = false;

	pthread_mutex_lock(&fill.mu);
	for (unsigned k = 0; k < fill.n && !hit; k++) {
		unsigned j = (fill.head + k) % FILL_JOBS;

		if (fill.job[j] == out) {
			fill.job[j] = NULL;
			hit = true;
		}
	}
	pthread_mutex_unlock(&fill.mu);
	return hit;
}

static void
list_add(struct tslab_pool *p, struct tslab *s)
{
	s->prev = NULL;
	s->next = p->room[s->cls];
	if (s->next != NULL)
		s->next->prev = s;
	p->room[s->cls] = s;
	s->listed = true;
}

static void
list_del(struct tslab_pool *p, struct tslab *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		p->room[s->cls] = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
	s->listed = false;
}

/* Memory for a slab, aligned to its size: map twice as much and cut
 * the ends. `huge`: asks for huge pages. NULL when out of memory. */
static struct tslab *
slab_map(bool huge)
{
	size_t span = (size_t)TSLAB_SLAB * 2;
	uint8_t *m = mmap(NULL, span, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t at;

	if (m == MAP_FAILED)
		return NULL;
	at = ((uintptr_t)m + TSLAB_SLAB - 1) & ~(uintptr_t)(TSLAB_SLAB - 1);
	if (at > (uintptr_t)m)
		munmap(m, at - (uintptr_t)m);
	if ((uintptr_t)m + span > at + TSLAB_SLAB)
		munmap((void *)(at + TSLAB_SLAB),
		    (uintptr_t)m + span - (at + TSLAB_SLAB));
#ifdef MADV_HUGEPAGE
	if (huge)
		(void)madvise((void *)at, TSLAB_SLAB, MADV_HUGEPAGE);
#else
	(void)huge;
#endif
	return (struct tslab *)at;
}

/* Has the worker let go of the slab of `ticket`? */
static bool
fill_done(uint32_t ticket)
{
	uint32_t d = atomic_load_explicit(&fill.done, memory_order_acquire);

	return ticket == 0 || (int32_t)(d - ticket) >= 0;
}

/* Waits for the worker's job `ticket`; false when it will not come (a
 * child of fork() has no worker). */
static bool
fill_wait(uint32_t ticket)
{
	while (!fill_done(ticket)) {
		if (fill.pid != getpid())
			return false;
		sched_yield();
	}
	return true;
}

/* Slot i (0: the oldest) of class cls's spares. */
static unsigned
spare_slot(const struct tslab_pool *p, unsigned cls, unsigned i)
{
	return (p->spare_head[cls] + i) % TSLAB_AHEAD_LOAD;
}

/* Is a load of many objects under way (tslab_expect to tslab_settle)?
 * Its slabs are then mapped in small pages (slab_new). */
static bool
loading(const struct tslab_pool *p)
{
	return p->spare_ahead > 1;
}

/* Does this machine give its free memory back to a hypervisor: a
 * virtio-balloon device with free page reporting (feature bit 5,
 * VIRTIO_BALLOON_F_REPORTING)? Read once, from sysfs. */
static bool reporting;

static void
reporting_read(void)
{
	const char *dir = "/sys/bus/virtio/drivers/virtio_balloon";
	DIR *d = opendir(dir);
	struct dirent *e;

	if (d == NULL)
		return;
	while (!reporting && (e = readdir(d)) != NULL) {
		char path[512], bits[64];
		FILE *f;

		if (strncmp(e->d_name, "virtio", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/features", dir, e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(bits, sizeof(bits), f) != NULL && strlen(bits) > 5)
			reporting = bits[5] == '1';
		fclose(f);
	}
	closedir(d);
}

bool
tslab_load_small(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void)pthread_once(&once, reporting_read);
	return reporting;
}

/* Are slabs made now a load's, in small pages (see the top)? */
static bool
load_small(const struct tslab_pool *p)
{
	return loading(p) && tslab_load_small();
}

/* Lets the kernel back slab s with huge pages from now on (khugepaged
 * gathers its small ones in the background). */
static void
slab_grow_huge(struct tslab *s)
{
#ifdef MADV_HUGEPAGE
	(void)madvise(s, TSLAB_SLAB, MADV_HUGEPAGE);
#endif
	s->small = false;
}

/* Does this thread run below the default priority (nice above 0)? */
static bool
below_default(void)
{
	errno = 0;
	return getpriority(PRIO_PROCESS, (id_t)gettid()) > 0 && errno == 0;
}

void
tslab_prefault(struct tslab_pool *p, const void *addr, size_t len)
{
	uintptr_t from =
	    ((uintptr_t)addr + TSLAB_PAGE - 1) & ~(uintptr_t)(TSLAB_PAGE - 1);
	uintptr_t to = ((uintptr_t)addr + len) & ~(uintptr_t)(TSLAB_PAGE - 1);

	if (!loading(p) || to <= from || to - from < TSLAB_PREFAULT_MIN ||
	    below_default())
		return;
	(void)fill_submit(NULL, NULL, false, (uint8_t *)from, to - from);
}

/* Asks the worker for the next spare of class cls, last in the class's
 * spares; false without a worker (no spare). */
static bool
spare_make(struct tslab_pool *p, unsigned cls)
{
	unsigned i = spare_slot(p, cls, p->nspare[cls]);

	/* The worker runs at the default priority: a thread below it (the
	 * snapshot worker, at nice 10 under the serving loop) faults its own
	 * pages, at its own priority. Linux gives each thread its own nice
	 * value, read through its thread id. */
	if (below_default())
		return false;
	if (!fill_submit(&p->spare[cls][i], &p->spare_ticket[cls][i],
	        !load_small(p), NULL, 0))
		return false;
	if (load_small(p))
		p->spare_small[cls] |= (uint8_t)(1u << i);
	else
		p->spare_small[cls] &= (uint8_t) ~(1u << i);
	p->nspare[cls]++;
	account(p, TSLAB_SLAB);
	return true;
}

/* Takes slot i of class cls's spares out of the count: the slab, once
 * the worker has made it, or NULL when it could not. */
static struct tslab *
spare_take(struct tslab_pool *p, unsigned cls, unsigned i)
{
	account(p, -(ptrdiff_t)TSLAB_SLAB);
	if (!fill_wait(p->spare_ticket[cls][i]))
		return NULL; /* a fork's child: its parent's job */
	return p->spare[cls][i];
}

/* Can slot i of class cls's spares be taken without waiting: the worker
 * is done with it, or this is a fork's child (which gets nothing)? */
static bool
spare_ready(const struct tslab_pool *p, unsigned cls, unsigned i)
{
	return fill_done(p->spare_ticket[cls][i]) || fill.pid != getpid();
}

/* Gives up the spares of class cls past the first `keep`: those the
 * worker has not started are taken back from it (a load that ends while
 * the worker is behind does not wait for spares it will not use), the
 * others unmapped once made. */
static void
spare_trim(struct tslab_pool *p, unsigned cls, unsigned keep)
{
	while (p->nspare[cls] > keep) {
		unsigned i;
		struct tslab *s;

		p->nspare[cls]--;
		i = spare_slot(p, cls, p->nspare[cls]);
		if (fill.pid == getpid() && fill_cancel(&p->spare[cls][i])) {
			account(p, -(ptrdiff_t)TSLAB_SLAB);
			continue;
		}
		s = spare_take(p, cls, i);
		if (s != NULL)
			munmap(s, TSLAB_SLAB);
	}
}

static void
spare_drop(struct tslab_pool *p, unsigned cls)
{
	spare_trim(p, cls, 0);
}

void
tslab_settle(struct tslab_pool *p)
{
	p->spare_ahead = 1;
	for (unsigned i = 0; i < TSLAB_CLASSES; i++)
		spare_trim(p, i, 1);
	for (struct tslab *s = p->all; s != NULL; s = s->anext)
		if (s->small)
			slab_grow_huge(s);
}

/* A new slab of class cls: the oldest spare when the worker has made it
 * (new spares are asked for), else freshly mapped, faulted in by the
 * caller as it fills it. A caller that waited for a spare the worker is
 * still faulting in would leave its own core idle when the host backs
 * memory slowly: it faults a slab of its own beside the worker instead,
 * and the spare, once made, serves the next slab. */
static struct tslab *
slab_new(struct tslab_pool *p, unsigned cls)
{
	struct tslab *s = NULL;
	bool spare, small = false;

	if (p->nspare[cls] > 0 && spare_ready(p, cls, p->spare_head[cls])) {
		small = (p->spare_small[cls] >> p->spare_head[cls]) & 1;
		s = spare_take(p, cls, p->spare_head[cls]);
		p->spare_head[cls] = (uint8_t)spare_slot(p, cls, 1);
		p->nspare[cls]--;
	}
	spare = s != NULL;
	if (!spare) {
		small = p->nslabs[cls] > 0 && load_small(p);
		if ((s = slab_map(p->nslabs[cls] > 0 && !load_small(p))) ==
		    NULL)
			return NULL;
	}
	if (p->nslabs[cls] + 1 >= p->spare_from) {
		uint32_t want = p->nslabs[cls] + 1;

		if (want > p->spare_ahead)
			want = p->spare_ahead;
		while (p->nspare[cls] < want && spare_make(p, cls))
			;
	}
	s->free = NULL;
	s->size = (cls + 1) * TSLAB_ALIGN;
	s->used = 0;
	s->bump = TSLAB_HDR;
	s->touched = spare ? TSLAB_SLAB : TSLAB_PAGE;
	s->cls = (uint16_t)cls;
	s->aprev = NULL;
	s->anext = p->all;
	if (s->anext != NULL)
		s->anext->aprev = s;
	p->all = s;
	p->nslabs[cls]++;
	account(p, spare ? TSLAB_SLAB : TSLAB_PAGE);
	list_add(p, s);
	s->small = small;
	if (small && !loading(p))
		slab_grow_huge(s); /* a load's spare, taken after it */
	return s;
}

static void
slab_drop(struct tslab_pool *p, struct tslab *s)
{
	if (s->listed)
		list_del(p, s);
	if (s->aprev != NULL)
		s->aprev->anext = s->anext;
	else
		p->all = s->anext;
	if (s->anext != NULL)
		s->anext->aprev = s->aprev;
	p->nslabs[s->cls]--;
	account(p, -(ptrdiff_t)s->touched);
	munmap(s, TSLAB_SLAB); /* the worker is done with it */
}

void
tslab_fini(struct tslab_pool *p)
{
	while (p->all != NULL)
		slab_drop(p, p->all);
	for (unsigned i = 0; i < TSLAB_CLASSES; i++)
		spare_drop(p, i);
}

void *
tslab_alloc(struct tslab_pool *p, size_t size)
{
	unsigned cls;
	struct tslab *s;
	void *o;

	if (size > TSLAB_MAX)
		return malloc(size);
	cls = size == 0 ? 0 : (unsigned)((size - 1) / TSLAB_ALIGN);
	s = p->room[cls];
	if (s == NULL && (s = slab_new(p, cls)) == NULL)
		return NULL;
	if (s->free != NULL) {
		o = s->free;
		s->free = *(void **)o;
	} else {
		o = (uint8_t *)s + s->bump;
		s->bump += s->size;
		if (s->bump > s->touched) {
			uint32_t t = (s->bump + TSLAB_PAGE - 1) &
			    ~(uint32_t)(TSLAB_PAGE - 1);

			account(p, (ptrdiff_t)(t - s->touched));
			s->touched = t;
		}
	}
	s->used++;
	if (s->free == NULL && s->bump + s->size > TSLAB_SLAB)
		list_del(p, s);
	return o;
}

void
tslab_free(struct tslab_pool *p, void *obj, size_t size)
{
	struct tslab *s;

	if (obj == NULL)
		return;
	if (size > TSLAB_MAX) {
		free(obj);
		return;
	}
	s = slab_of(obj);
	*(void **)obj = s->free;
	s->free = obj;
	s->used--;
	if (!s->listed)
		list_add(p, s);
	if (s->used > 0)
		return;
	/* The class shrinks: its spare, if any, goes. */
	spare_drop(p, s->cls);
	if (p->nslabs[s->cls] > 1) {
		slab_drop(p, s);
		return;
	}
	/* The last of its class: kept, emptied, and its pages past
	 * TSLAB_KEEP given back when it had grown beyond them. */
	s->free = NULL;
	s->bump = TSLAB_HDR;
	if (s->touched > TSLAB_KEEP) {
		(void)madvise((uint8_t *)s + TSLAB_KEEP,
		    s->touched - TSLAB_KEEP, MADV_DONTNEED);
		account(p, -(ptrdiff_t)(s->touched - TSLAB_KEEP));
		s->touched = TSLAB_KEEP;
	}
}

#endif
