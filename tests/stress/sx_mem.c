/*
 * tests/stress/sx_mem.c: the allocator seam of util/mem.h for the stress
 * programs, with a quarantine (see sx.h).
 *
 * Blocks of SX_QUARANTINE_MIN octets or more (the per-connection receive
 * buffer among them) and every sx_buf_alloc buffer are mmap'ed. On free they
 * stay mapped, are filled with a canary and (under ASan) poisoned, so a
 * user-space access after free is an ASan report and a write by the kernel
 * (a RECVMSG still in flight into the buffer: no sanitizer sees it) shows up
 * as canary damage at the next sx_mem_check. A block is checked twice before
 * it is unmapped. Smaller library blocks go to malloc under ASan (its own
 * quarantine); without ASan each gets its own pages, made PROT_NONE on free
 * and unmapped after two checks, so a use after free faults (the crash
 * handler names the block: sx_mem_describe).
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sx.h"
#include "util/mem.h"

#if defined(__SANITIZE_ADDRESS__)
#define SX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SX_ASAN 1
#endif
#endif
#ifdef SX_ASAN
#include <sanitizer/asan_interface.h>
#define sx_poison(p, n)	  ASAN_POISON_MEMORY_REGION(p, n)
#define sx_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define sx_poison(p, n)	  ((void)(p), (void)(n))
#define sx_unpoison(p, n) ((void)(p), (void)(n))
#endif

#define HDR                                                                    \
	128u /* header in front of every block (keeps 16-octet alignment)      \
	      */
#define MAGIC_HEAP  0x5348454150u /* "SHEAP" */
#define MAGIC_MAP   0x534d4150u	  /* "SMAP" */
#define MAGIC_FREED 0x46524545u	  /* "FREE" */
#define SITE_FRAMES 7

struct blk_hdr {
	uint64_t magic;
	size_t len;
	void *site[SITE_FRAMES]; /* allocation backtrace (mmap'ed blocks) */
	uint32_t nsite;
	uint16_t lib;	/* 1: allocated through the library seam */
	uint16_t guard; /* 1: freed = PROT_NONE (no canary) */
};

struct qnode {
	uint8_t *map;
	size_t maplen;
	uint8_t *user;
	size_t len;
	unsigned long gen; /* check generation when it was freed */
	bool guard;	   /* PROT_NONE since its free */
	bool lib;
	uint32_t nsite;
	void *site[SITE_FRAMES];
	struct qnode *next;
};

_Static_assert(sizeof(struct blk_hdr) <= HDR, "blk_hdr fits in HDR");

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static struct qnode *q_head;
static unsigned long q_gen;
static long mem_live;

static size_t page_size(void)
{
	static size_t ps; /* engine threads allocate too: atomic */
	size_t v = __atomic_load_n(&ps, __ATOMIC_RELAXED);

	if (!v) {
		v = (size_t)sysconf(_SC_PAGESIZE);
		__atomic_store_n(&ps, v, __ATOMIC_RELAXED);
	}
	return v;
}

static uint8_t canary_byte(size_t i)
{
	uint64_t w = 0xFEE1DEADC0DEF00Dull ^
		     ((uint64_t)(i >> 3) * 0x9E3779B97F4A7C15ull);

	return (uint8_t)(w >> ((i & 7u) * 8u));
}

/* |map|: 0 malloc, 1 canary (mmap, checked after free), 2 guard (mmap,
 * PROT_NONE after free: any access faults). */
static void *blk_alloc(size_t size, int map, bool lib)
{
	struct blk_hdr *h;
	uint8_t *base;

	if (!map) {
		base = malloc(HDR + size);
		if (!base)
			return NULL;
		h = (struct blk_hdr *)(void *)base;
		memset(h, 0, sizeof(*h));
		h->magic = MAGIC_HEAP;
	} else {
		size_t ps = page_size();
		size_t maplen = ps + ((size + ps - 1) / ps) * ps;

		base = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base == MAP_FAILED)
			return NULL;
		base += ps - HDR;
		h = (struct blk_hdr *)(void *)base;
		memset(h, 0, sizeof(*h));
		h->magic = MAGIC_MAP;
		h->guard = map == 2;
		h->nsite = (uint32_t)backtrace(h->site, SITE_FRAMES);
	}
	h->len = size;
	h->lib = lib;
	return base + HDR;
}

static struct blk_hdr *hdr_of(void *p)
{
	struct blk_hdr *h = (struct blk_hdr *)(void *)((uint8_t *)p - HDR);

	if (h->magic != MAGIC_HEAP && h->magic != MAGIC_MAP) {
		fprintf(stderr,
			"sx_mem: free of %p: not a live block (magic %#llx)\n",
			p, (unsigned long long)h->magic);
		abort();
	}
	return h;
}

static void blk_free(void *p)
{
	struct blk_hdr *h = hdr_of(p);
	struct qnode *q;
	size_t i, ps;

	if (h->magic == MAGIC_HEAP) {
		h->magic = MAGIC_FREED;
		free(h);
		return;
	}
	q = malloc(sizeof(*q));
	if (!q) {
		fprintf(stderr, "sx_mem: out of memory for the quarantine\n");
		abort();
	}
	ps = page_size();
	q->user = p;
	q->len = h->len;
	q->map = (uint8_t *)p - ps;
	q->maplen = ps + ((h->len + ps - 1) / ps) * ps;
	q->guard = h->guard;
	q->lib = h->lib;
	q->nsite = h->nsite;
	memcpy(q->site, h->site, sizeof(q->site));
	h->magic = MAGIC_FREED;
	if (q->guard) {
		if (mprotect(q->map, q->maplen, PROT_NONE) != 0) {
			fprintf(stderr, "sx_mem: mprotect: %s\n",
				strerror(errno));
			abort();
		}
	} else {
		for (i = 0; i < q->len; i++)
			q->user[i] = canary_byte(i);
		sx_poison(q->user, q->len);
	}
	pthread_mutex_lock(&q_lock);
	q->gen = q_gen;
	q->next = q_head;
	q_head = q;
	pthread_mutex_unlock(&q_lock);
}

/* Prints an allocation backtrace, each frame named by addr2line(1)
 * (its module and offset when addr2line is missing). */
void sx_print_frames(void *const *site, uint32_t nsite)
{
	char cmd[1024];
	Dl_info di;
	uint32_t i;
	int rc;

	for (i = 0; i < nsite; i++) {
		if (!dladdr(site[i], &di) || !di.dli_fname || !di.dli_fbase) {
			fprintf(stderr, "    %p\n", site[i]);
			continue;
		}
		fflush(stderr);
		snprintf(
			cmd, sizeof(cmd),
			"addr2line -f -p -e '%s' %#lx 2>/dev/null | sed 's/^/    /' 1>&2"
			" || echo '    %s+%#lx' 1>&2",
			di.dli_fname,
			(unsigned long)((uintptr_t)site[i] -
					(uintptr_t)di.dli_fbase - 1u),
			di.dli_fname,
			(unsigned long)((uintptr_t)site[i] -
					(uintptr_t)di.dli_fbase));
		rc = system(cmd);
		(void)rc;
	}
}

/* Reports a damaged block; returns 1 if damaged. */
static int q_check(const struct qnode *q)
{
	size_t i, first = 0, last = 0, changed = 0;

	if (q->guard)
		return 0; /* PROT_NONE: an access faulted already */
	sx_unpoison(q->user, q->len);
	for (i = 0; i < q->len; i++) {
		if (q->user[i] == canary_byte(i))
			continue;
		if (!changed)
			first = i;
		last = i;
		changed++;
	}
	sx_poison(q->user, q->len);
	if (!changed)
		return 0;
	fprintf(stderr,
		"kernel wrote into freed buffer: %s block of %zu octets at %p: "
		"%zu octets changed after free, offsets %zu..%zu"
#ifndef SX_ASAN
		" (a build without ASan cannot tell kernel from user-space writes)"
#endif
		"; allocated at:\n",
		q->lib ? "library" : "test", q->len, (const void *)q->user,
		changed, first, last);
	fflush(stderr);
	sx_print_frames(q->site, q->nsite);
	return 1;
}

int sx_mem_check(void)
{
	struct qnode **pp, *q;
	int bad = 0;

	pthread_mutex_lock(&q_lock);
	for (pp = &q_head; (q = *pp) != NULL;) {
		bad += q_check(q);
		if (q->gen < q_gen) {
			/* freed before the previous check: checked twice now */
			*pp = q->next;
			if (!q->guard)
				sx_unpoison(q->user, q->len);
			munmap(q->map, q->maplen);
			free(q);
			continue;
		}
		pp = &q->next;
	}
	q_gen++;
	pthread_mutex_unlock(&q_lock);
	return bad;
}

void *sx_buf_alloc(size_t len)
{
	void *p = blk_alloc(len ? len : 1, 1, false);

	if (!p) {
		fprintf(stderr, "sx_buf_alloc(%zu): %s\n", len,
			strerror(errno));
		abort();
	}
	return p;
}

void sx_buf_free(void *p)
{
	if (p)
		blk_free(p);
}

void sx_mem_describe(const void *addr)
{
	const uint8_t *a = addr;
	const struct qnode *q;
	/* a dying process: if the lock is taken (by the faulting thread
	 * itself, maybe), walk the list without it */
	bool locked = pthread_mutex_trylock(&q_lock) == 0;

	for (q = q_head; q; q = q->next) {
		if (a < q->map || a >= q->map + q->maplen)
			continue;
		fprintf(stderr,
			"use after free: %s block of %zu octets at %p, read or "
			"written at offset %td after its free; allocated at:\n",
			q->lib ? "library" : "test", q->len,
			(const void *)q->user, a - q->user);
		fflush(stderr);
		sx_print_frames(q->site, q->nsite);
		break;
	}
	if (locked)
		pthread_mutex_unlock(&q_lock);
}

long sx_mem_live(void)
{
	return __atomic_load_n(&mem_live, __ATOMIC_RELAXED);
}

/* ---- the seam (util/mem.h) ------------------------------------------------
 */

/* How a library block of |size| is kept: the canary for big ones (the
 * kernel may write into them), small ones with ASan's own quarantine, or
 * without ASan on their own pages, PROT_NONE once freed. */
static int lib_kind(size_t size)
{
	if (size >= SX_QUARANTINE_MIN)
		return 1;
#ifdef SX_ASAN
	return 0;
#else
	return 2;
#endif
}

void *iw_malloc(size_t size)
{
	void *p = blk_alloc(size ? size : 1, lib_kind(size), true);

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	__atomic_add_fetch(&mem_live, 1, __ATOMIC_RELAXED);
	return p;
}

void *iw_calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (n && size && __builtin_mul_overflow(n, size, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	total = (n ? n : 1) * (size ? size : 1);
	p = iw_malloc(total);
	if (p)
		memset(p, 0, total);
	return p;
}

void *iw_realloc(void *p, size_t size)
{
	struct blk_hdr *h;
	void *q;

	if (!p)
		return iw_malloc(size);
	h = hdr_of(p);
	q = blk_alloc(size ? size : 1, lib_kind(size), true);
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(q, p, h->len < size ? h->len : size);
	blk_free(p);
	return q;
}

void iw_free(void *p)
{
	if (!p)
		return;
	__atomic_sub_fetch(&mem_live, 1, __ATOMIC_RELAXED);
	blk_free(p);
}

long iw_mem_outstanding(void)
{
	return sx_mem_live();
}
