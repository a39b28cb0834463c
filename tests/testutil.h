/*
 * tests/testutil.h: helpers shared by the Check suites.
 *
 * Each tests/<module>_test.c defines `Suite *<module>_suite(void)` and ends
 * with IW_TEST_MAIN(<module>_suite). Receive paths are replayed with
 * iw_test_feed_splits(): the whole input, then split at every byte
 * boundary, then one byte at a time.
 */
#ifndef IWARP_TESTS_TESTUTIL_H
#define IWARP_TESTS_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Runs |s| in CK_NORMAL mode, returns the process exit status. */
int iw_test_run_suite(Suite *s);

/*
 * Checked fixtures for a TCase that runs its tests again with a setting
 * the library reads when a context opens: two engine threads per context
 * (IWARP_ENGINES=2), or io_uring socket I/O (IWARP_SOCKET_IO=ring; the
 * default with one engine is direct socket I/O).
 * iw_test_env_default unsets both.
 */
void iw_test_env_engines_two(void);
void iw_test_env_socket_ring(void);
void iw_test_env_default(void);

#define IW_TEST_MAIN(suite_fn)                                                 \
	int main(void)                                                         \
	{                                                                      \
		return iw_test_run_suite(suite_fn());                          \
	}

/*
 * A receive consumer for iw_test_feed_splits(): |reset| starts a fresh
 * receiver, |feed| hands it the next chunk (returns 0 or a negative error),
 * |check| asserts the final state after the whole input was fed.
 */
struct iw_test_rx_ops {
	void (*reset)(void *ctx);
	int (*feed)(void *ctx, const uint8_t *buf, size_t len);
	void (*check)(void *ctx, int last_rc);
};

/*
 * Feeds |buf| to |ops| (1) in one piece, (2) split in two at every offset
 * 1..len-1, (3) one byte at a time; calls |check| after each replay.
 * A negative return from |feed| stops that replay and is passed to |check|.
 */
void iw_test_feed_splits(const struct iw_test_rx_ops *ops, void *ctx,
			 const uint8_t *buf, size_t len);

/*
 * Waits (sched_yield between looks) until the atomic |*count| reaches
 * |want|. Returns false when |bound_s| seconds passed first: a lost event
 * fails the caller's assertion instead of hanging it.
 */
bool iw_test_wait_count(const unsigned int *count, unsigned int want,
			double bound_s);

/* Deterministic PRNG for test data (xorshift64*), never 0 from a 0 seed. */
uint64_t iw_test_rand(uint64_t *state);
void iw_test_fill(uint8_t *buf, size_t len, uint64_t seed);

/* Reads a whole file under $top_srcdir (or ".") into a malloc'd buffer. */
uint8_t *iw_test_read_file(const char *relpath, size_t *len);

/* Path of a file under $top_srcdir (static buffer). */
const char *iw_test_srcpath(const char *relpath);

/* Bitwise CRC-32C (docs/interop-notes.md §6.3: reflected 0x82F63B78,
 * preload and final XOR 0xFFFFFFFF), independent of util/crc32c.c: the
 * reference of tests that check CRCs on the wire. */
uint32_t iw_test_crc32c_ref(const uint8_t *p, size_t len);

/*
 * Writes the bare TERMINATE LLP/MPA |ecode| that starts an FPDU stream
 * (docs/interop-notes.md §6.4/§6.6): [marker 00 00 00 00 when |markers|]
 * ULPDU_Length 22, DDP/RDMAP control `41 47`, RsvdULP 0, QN 2, MSN 1, MO 0,
 * control word Layer 2 | EType 0 | |ecode| with Hdrct 0, no pad, CRC
 * (little-endian, covering the marker) when |crc| else 0. |out| holds 32
 * octets; returns the length (28, or 32 with the marker).
 */
size_t iw_test_llp_term(uint8_t *out, uint8_t ecode, bool crc, bool markers);

#endif
