/*
 * util/crc32c.c: CRC-32C backend table and the crc32c_update dispatcher.
 *
 * The backend is chosen once, on the first call, under pthread_once:
 * ISA-L when built in, else SSE4.2 (+PCLMULQDQ) when the CPU has it, else
 * slicing-by-8. ISA-L's own dispatch costs ~16 ns a call (DESIGN.md), so
 * with ISA-L and SSE4.2 both usable, buffers under CRC_ISAL_MIN octets go
 * to the inline SSE4.2 loop and only larger ones to ISA-L.
 * crc32c_selected() names the backend used for large buffers.
 *
 * Fuzzing builds (IWARP_FUZZING) compute the same CRC: the MPA layer
 * bypasses the check, not the computation.
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>

#include "util/crc32c.h"

/* Below this many octets the inline SSE4.2 loop beats a call into ISA-L. */
#define CRC_ISAL_MIN 256

static int crc_always(void)
{
	return 1;
}

/* Preference order: the first available entry is selected. */
static const struct crc32c_backend crc_backends[] = {
#ifdef HAVE_ISAL
	{"isal", crc32c_isal_available, crc32c_isal_update},
#endif
	{"sse42", crc32c_sse42_available, crc32c_sse42_update},
	{"slice8", crc_always, crc32c_slice8_update},
};

#define CRC_NBACKENDS (sizeof(crc_backends) / sizeof(crc_backends[0]))

typedef uint32_t crc_update_fn(uint32_t crc, const void *buf, size_t len);

static uint32_t crc_update_first(uint32_t crc, const void *buf, size_t len);

static crc_update_fn *_Atomic crc_update_impl = crc_update_first;
static const struct crc32c_backend *crc_sel;
static pthread_once_t crc_sel_once = PTHREAD_ONCE_INIT;

#ifdef HAVE_ISAL
/* ISA-L for large buffers, the SSE4.2 loop for small ones. */
static uint32_t crc_update_isal_sse42(uint32_t crc, const void *buf, size_t len)
{
	if (len < CRC_ISAL_MIN)
		return crc32c_sse42_update(crc, buf, len);
	return crc32c_isal_update(crc, buf, len);
}
#endif

static void crc_select(void)
{
	crc_update_fn *fn;
	size_t i;

	crc_sel = &crc_backends[CRC_NBACKENDS - 1];
	for (i = 0; i < CRC_NBACKENDS; i++) {
		if (crc_backends[i].available()) {
			crc_sel = &crc_backends[i];
			break;
		}
	}
	fn = crc_sel->update;
#ifdef HAVE_ISAL
	if (fn == crc32c_isal_update && crc32c_sse42_available())
		fn = crc_update_isal_sse42;
#endif
	atomic_store_explicit(&crc_update_impl, fn, memory_order_release);
}

static uint32_t crc_update_first(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&crc_sel_once, crc_select);
	return atomic_load_explicit(&crc_update_impl,
				    memory_order_acquire)(crc, buf, len);
}

uint32_t crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	return atomic_load_explicit(&crc_update_impl,
				    memory_order_acquire)(crc, buf, len);
}

uint32_t crc32c_update_iov(uint32_t crc, const struct iovec *iov, size_t iovcnt)
{
	crc_update_fn *fn =
		atomic_load_explicit(&crc_update_impl, memory_order_acquire);
	size_t i;

	for (i = 0; i < iovcnt; i++)
		crc = fn(crc, iov[i].iov_base, iov[i].iov_len);
	return crc;
}

const struct crc32c_backend *crc32c_backends(size_t *n)
{
	*n = CRC_NBACKENDS;
	return crc_backends;
}

const struct crc32c_backend *crc32c_selected(void)
{
	pthread_once(&crc_sel_once, crc_select);
	return crc_sel;
}
