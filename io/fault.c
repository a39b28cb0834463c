/*
 * io/fault.c: a fault-injecting backend wrapped around any backend:
 * short reads and writes, an error on the Nth operation, a flipped byte at
 * a receive stream offset, a connection cut after N bytes, a receiver that
 * stops reading after N bytes.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "io/backend.h"
#include "io/engine_int.h"
#include "io/ep.h"
#include "io/testio.h"
#include "util/mem.h"

struct fault_be {
	struct io_backend be; /* first */
	struct io_backend *inner;
	struct io_fault_cfg cfg;
	uint64_t rng;
	uint64_t rx_ops, tx_ops; /* ops started so far */
	uint64_t rx_off, tx_off; /* stream offsets */
	struct iovec rx_iov[EP_IOV_MAX], tx_iov[EP_IOV_MAX];
	int rx_cnt, tx_cnt;
	bool rx_fake, tx_fake; /* an injected completion is pending */
	ssize_t rx_fake_res, tx_fake_res;
	bool tx_cut_done;
	bool rx_stalled; /* a recv is held at stall_rx_after */
	bool dying;
	bool in_work;		 /* inside fault_work: destroy must not free */
	struct engine_work work; /* delivers injected completions */
};

void io_fault_cfg_init(struct io_fault_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->fail_rx_nth = IO_FAULT_NEVER;
	cfg->fail_tx_nth = IO_FAULT_NEVER;
	cfg->fail_err = -EIO;
	cfg->flip_rx_off = IO_FAULT_NEVER;
	cfg->flip_mask = 0x01;
	cfg->cut_rx_after = IO_FAULT_NEVER;
	cfg->cut_tx_after = IO_FAULT_NEVER;
	cfg->cut_err = -ECONNRESET;
	cfg->stall_rx_after = IO_FAULT_NEVER;
}

static uint64_t fault_rand(struct fault_be *f)
{
	/* xorshift64* */
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 2685821657736338717ull;
}

/* Copies |iov| into |out| keeping at most |max| bytes; returns the count. */
static int fault_trim(struct iovec *out, const struct iovec *iov, int cnt,
		      uint64_t max)
{
	int i, n = 0;

	for (i = 0; i < cnt && max; i++) {
		out[n] = iov[i];
		if (out[n].iov_len > max)
			out[n].iov_len = (size_t)max;
		max -= out[n].iov_len;
		if (out[n].iov_len)
			n++;
	}
	return n;
}

static uint64_t iov_total(const struct iovec *iov, int cnt)
{
	uint64_t t = 0;
	int i;

	for (i = 0; i < cnt; i++)
		t += iov[i].iov_len;
	return t;
}

static void fault_work(void *arg)
{
	struct fault_be *f = arg;

	f->in_work = true;
	if (f->rx_fake && !f->dying) {
		f->rx_fake = false;
		f->be.up.rx_complete(f->be.up.up, f->rx_fake_res);
	}
	if (f->tx_fake && !f->dying) {
		f->tx_fake = false;
		f->be.up.tx_complete(f->be.up.up, f->tx_fake_res);
	}
	f->in_work = false;
	if (f->dying && !atomic_load(&f->work.queued))
		iw_free(f);
}

static void fault_rx_complete(void *up, ssize_t res)
{
	struct fault_be *f = up;

	if (res > 0) {
		uint64_t end = f->rx_off + (uint64_t)res;

		if (f->cfg.flip_rx_off >= f->rx_off &&
		    f->cfg.flip_rx_off < end) {
			uint64_t skip = f->cfg.flip_rx_off - f->rx_off;
			int i;

			for (i = 0; i < f->rx_cnt; i++) {
				if (skip < f->rx_iov[i].iov_len) {
					((uint8_t *)f->rx_iov[i]
						 .iov_base)[skip] ^=
						f->cfg.flip_mask;
					break;
				}
				skip -= f->rx_iov[i].iov_len;
			}
		}
		f->rx_off = end;
	}
	f->be.up.rx_complete(f->be.up.up, res);
}

static void fault_tx_complete(void *up, ssize_t res)
{
	struct fault_be *f = up;

	if (res > 0) {
		f->tx_off += (uint64_t)res;
		if (f->tx_off >= f->cfg.cut_tx_after && !f->tx_cut_done) {
			f->tx_cut_done = true;
			f->inner->ops->shutdown(
				f->inner); /* the peer sees EOF */
		}
	}
	f->be.up.tx_complete(f->be.up.up, res);
}

static int fault_inject(struct fault_be *f, bool rx, ssize_t res)
{
	if (rx) {
		f->rx_fake = true;
		f->rx_fake_res = res;
	} else {
		f->tx_fake = true;
		f->tx_fake_res = res;
	}
	engine_work_queue(f->be.eng, &f->work);
	return 0;
}

static int fault_recv(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct fault_be *f = (struct fault_be *)be;
	uint64_t max;

	f->rx_ops++;
	if (f->rx_ops == f->cfg.fail_rx_nth)
		return fault_inject(f, true, f->cfg.fail_err);
	if (f->rx_off >= f->cfg.cut_rx_after)
		return fault_inject(f, true, f->cfg.cut_err);
	if (f->rx_off >= f->cfg.stall_rx_after) {
		f->rx_stalled = true; /* completes at cancel */
		return 0;
	}
	max = f->cfg.cut_rx_after - f->rx_off;
	if (f->cfg.stall_rx_after - f->rx_off < max)
		max = f->cfg.stall_rx_after - f->rx_off;
	if (f->cfg.short_rx) {
		uint64_t total = iov_total(iov, cnt);

		if (total > 1) {
			uint64_t k = 1 + fault_rand(f) % total;

			if (k < max)
				max = k;
		}
	}
	f->rx_cnt = fault_trim(f->rx_iov, iov, cnt, max);
	return f->inner->ops->recv(f->inner, f->rx_iov, f->rx_cnt);
}

static int fault_send(struct io_backend *be, const struct iovec *iov, int cnt)
{
	struct fault_be *f = (struct fault_be *)be;
	uint64_t max;

	f->tx_ops++;
	if (f->tx_ops == f->cfg.fail_tx_nth)
		return fault_inject(f, false, f->cfg.fail_err);
	if (f->tx_off >= f->cfg.cut_tx_after)
		return fault_inject(f, false,
				    f->cfg.cut_err ? f->cfg.cut_err : -EPIPE);
	max = f->cfg.cut_tx_after - f->tx_off;
	if (f->cfg.short_tx) {
		uint64_t total = iov_total(iov, cnt);

		if (total > 1) {
			uint64_t k = 1 + fault_rand(f) % total;

			if (k < max)
				max = k;
		}
	}
	f->tx_cnt = fault_trim(f->tx_iov, iov, cnt, max);
	return f->inner->ops->send(f->inner, f->tx_iov, f->tx_cnt);
}

static int fault_shutdown(struct io_backend *be)
{
	struct fault_be *f = (struct fault_be *)be;

	if (f->tx_cut_done)
		return 0;
	return f->inner->ops->shutdown(f->inner);
}

static void fault_cancel(struct io_backend *be)
{
	struct fault_be *f = (struct fault_be *)be;

	if (f->rx_stalled) {
		f->rx_stalled = false;
		(void)fault_inject(f, true, -ECANCELED);
	}
	f->inner->ops->cancel(f->inner);
}

static void fault_destroy(struct io_backend *be, bool abort)
{
	struct fault_be *f = (struct fault_be *)be;

	f->inner->ops->destroy(f->inner, abort);
	f->inner = NULL;
	f->dying = true;
	if (!f->in_work && !atomic_load(&f->work.queued))
		iw_free(f);
}

static int fault_mss(struct io_backend *be)
{
	struct fault_be *f = (struct fault_be *)be;

	return f->inner->ops->mss(f->inner);
}

static const struct io_backend_ops fault_ops = {
	.name = "fault",
	.recv = fault_recv,
	.send = fault_send,
	.shutdown = fault_shutdown,
	.cancel = fault_cancel,
	.destroy = fault_destroy,
	.mss = fault_mss,
};

struct io_backend *io_fault_wrap(struct io_backend *inner,
				 const struct io_fault_cfg *cfg)
{
	struct fault_be *f = iw_calloc(1, sizeof(*f));
	struct io_backend_up up = {fault_rx_complete, fault_tx_complete, NULL};

	if (!f) {
		inner->ops->destroy(inner, true);
		return NULL;
	}
	f->be.ops = &fault_ops;
	f->be.eng = inner->eng;
	f->inner = inner;
	f->cfg = *cfg;
	f->rng = cfg->seed ? cfg->seed : 0x9e3779b97f4a7c15ull;
	engine_work_init(&f->work, fault_work, f);
	up.up = f;
	io_backend_set_up(inner, &up);
	return &f->be;
}
