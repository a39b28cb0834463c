/* util/mem.c: counted allocator seam (see mem.h). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "util/mem.h"

static long mem_live;

void *iw_malloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	__atomic_add_fetch(&mem_live, 1, __ATOMIC_RELAXED);
	return p;
}

void *iw_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	__atomic_add_fetch(&mem_live, 1, __ATOMIC_RELAXED);
	return p;
}

void *iw_realloc(void *p, size_t size)
{
	void *q;

	if (!p)
		return iw_malloc(size);
	q = realloc(p, size ? size : 1);
	if (!q)
		errno = ENOMEM;
	return q;
}

void iw_free(void *p)
{
	if (!p)
		return;
	__atomic_sub_fetch(&mem_live, 1, __ATOMIC_RELAXED);
	free(p);
}

long iw_mem_outstanding(void)
{
	return __atomic_load_n(&mem_live, __ATOMIC_RELAXED);
}
