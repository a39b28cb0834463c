/*
 * util/mem.h: the library's allocator seam.
 *
 * Every allocation in libiwarp goes through iw_malloc/iw_calloc/iw_free so
 * tests can check that the count of live blocks is back to zero at teardown
 * (a leak check that does not need a sanitizer).
 */
#ifndef IWARP_UTIL_MEM_H
#define IWARP_UTIL_MEM_H

#include <stddef.h>

/* Allocate |size| bytes; NULL with errno ENOMEM on failure. */
void *iw_malloc(size_t size);
/* Allocate |n| zeroed elements of |size| bytes; NULL with errno ENOMEM. */
void *iw_calloc(size_t n, size_t size);
/* Resize a block from iw_malloc/iw_calloc; NULL (block kept) on failure. */
void *iw_realloc(void *p, size_t size);
/* Free a block from iw_malloc/iw_calloc/iw_realloc; NULL is a no-op. */
void iw_free(void *p);
/* Number of blocks currently allocated through this seam. */
long iw_mem_outstanding(void);

#endif /* IWARP_UTIL_MEM_H */
