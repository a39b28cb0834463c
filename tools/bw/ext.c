/*
 * iwarp_bw: the RFC 7306 tests (perftest's ib_atomic_bw/ib_atomic_lat,
 * --write_with_imm, and Send with Immediate Data) and their data checks.
 *
 * Atomics (RFC 7306 §5): each data QP's target is the first 8 octets of the
 * peer's remote-target region (the buffer is zeroed, so the counter starts
 * at 0). FETCH_AND_ADD adds 1 per WR; CMP_AND_SWAP with WR number s (from
 * 0) compares s and swaps in s + 1. A responder executes a QP's Atomic
 * Requests in order, so every compare hits and either way the counter ends
 * at the number of WRs posted on that QP. The latency client checks every
 * fetched original value; the BW client reads the counter back with one
 * FETCH_AND_ADD of 0 after the measurement; the server checks its counters
 * once the client says it is done.
 *
 * Immediate Data (RFC 7306 §4.1, §4.2): WR number s of a QP carries
 * htonl(s); the receiver checks that every completion has
 * IWARP_WC_WITH_IMM, the expected opcode and the next value in sequence.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "tools/bw/bw.h"

int bw_ext_used(const struct bw_opts *o)
{
	return o->atomic || o->write_imm || o->send_imm;
}

const char *bw_atomic_name(const struct bw_opts *o)
{
	return o->atomic_op == BW_ATOMIC_CAS ? "CMP_AND_SWAP" : "FETCH_AND_ADD";
}

void bw_ext_fill_wr(const struct bw_opts *o, uint64_t seq, uint64_t rem_addr,
		    uint32_t rkey, struct iwarp_send_wr *wr,
		    struct iwarp_sge *sge)
{
	if (o->atomic) {
		sge->length = 8;
		wr->send_flags &= ~(unsigned int)IWARP_SEND_INLINE;
		wr->wr.atomic.remote_addr = rem_addr;
		wr->wr.atomic.rkey = rkey;
		if (o->atomic_op == BW_ATOMIC_CAS) {
			wr->opcode = IWARP_WR_ATOMIC_CMP_AND_SWP;
			wr->wr.atomic.compare_add = seq;
			wr->wr.atomic.swap = seq + 1;
		} else {
			wr->opcode = IWARP_WR_ATOMIC_FETCH_AND_ADD;
			wr->wr.atomic.compare_add = 1;
		}
	} else if (o->write_imm) {
		wr->opcode = IWARP_WR_RDMA_WRITE_WITH_IMM;
		wr->imm_data = htonl((uint32_t)seq);
	} else if (o->send_imm) {
		wr->opcode = IWARP_WR_SEND_WITH_IMM;
		wr->num_sge = 0; /* Immediate Data only, no payload */
		wr->imm_data = htonl((uint32_t)seq);
	}
}

int bw_ext_check_recv(const struct bw_opts *o, int qp, uint64_t seq,
		      const struct iwarp_wc *wc)
{
	enum iwarp_wc_opcode want =
		o->write_imm ? IWARP_WC_RECV_RDMA_WITH_IMM : IWARP_WC_RECV;

	if (!o->write_imm && !o->send_imm)
		return 0;
	if (!(wc->wc_flags & IWARP_WC_WITH_IMM)) {
		fprintf(stderr,
			" iwarp_bw: data check failed: QP %d message %llu has no immediate data\n",
			qp, (unsigned long long)seq);
		return -EBADMSG;
	}
	/*
	 * Send with Immediate: the wire has no such message, only Immediate
	 * Data; when it directly follows one of the peer's plain RDMA Writes
	 * (the Send test's credit Writes, -b) the receiver cannot tell it
	 * from a Write with Immediate and reports RECV_RDMA_WITH_IMM
	 * (docs/rdmap-ext.md). Only a Write test insists on the opcode.
	 */
	if (o->send_imm && wc->opcode == IWARP_WC_RECV_RDMA_WITH_IMM)
		want = wc->opcode;
	if (wc->opcode != want) {
		fprintf(stderr,
			" iwarp_bw: data check failed: QP %d message %llu completed as opcode %d, expected %d\n",
			qp, (unsigned long long)seq, (int)wc->opcode,
			(int)want);
		return -EBADMSG;
	}
	if (ntohl(wc->imm_data) != (uint32_t)seq) {
		fprintf(stderr,
			" iwarp_bw: data check failed: QP %d message %llu carried immediate %u, expected %u\n",
			qp, (unsigned long long)seq, ntohl(wc->imm_data),
			(uint32_t)seq);
		return -EBADMSG;
	}
	return 0;
}

int bw_atomic_check_fetched(const struct bw_opts *o, uint64_t seq, uint64_t got)
{
	(void)o; /* both operations fetch seq: 0, 1, 2, ... */
	if (got == seq)
		return 0;
	fprintf(stderr,
		" iwarp_bw: data check failed: %s %llu fetched %llu, expected %llu\n",
		bw_atomic_name(o), (unsigned long long)seq,
		(unsigned long long)got, (unsigned long long)seq);
	return -EBADMSG;
}

int bw_atomic_check_server(const struct bw_data *d, const struct bw_opts *o,
			   int nqp, uint64_t want)
{
	int i, bad = 0;

	for (i = 0; i < nqp; i++) {
		uint64_t v;

		/* the peer's atomics are done: the client said so through the
		 * control channel after its last completion */
		memcpy(&v, d->buf + (size_t)(d->n + i) * d->buff, sizeof(v));
		if (v != want) {
			fprintf(stderr,
				" iwarp_bw: data check failed: QP %d target counter is %llu after %s, expected %llu\n",
				i, (unsigned long long)v, bw_atomic_name(o),
				(unsigned long long)want);
			bad = 1;
		}
	}
	return bad ? -EBADMSG : 0;
}

void bw_ext_post_error(int rc)
{
	/* only the RFC 7306 opcodes fail so on a connected QP */
	if (rc == -EOPNOTSUPP)
		fprintf(stderr,
			" iwarp_bw: the peer did not negotiate the RFC 7306 extensions"
			" (run it with the same --test atomic / --write_with_imm / --send_with_imm"
			" option, or IWARP_RDMAP_EXT=1)\n");
}

int bw_atomic_readback(struct bw_data *d, const struct bw_opts *o,
		       uint64_t want)
{
	int i, rc, bad = 0;

	for (i = 0; i < d->n; i++) {
		uint8_t *res = d->buf + (size_t)i * d->buff;
		struct iwarp_sge sge = {.addr = (uintptr_t)res,
					.length = 8,
					.lkey = d->mr->lkey};
		struct iwarp_send_wr wr, *bad_wr;
		struct iwarp_wc wc;
		uint64_t v;

		memset(&wr, 0, sizeof(wr));
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IWARP_WR_ATOMIC_FETCH_AND_ADD; /* adds 0: a read */
		wr.send_flags = IWARP_SEND_SIGNALED;
		wr.wr_id =
			(uint64_t)(unsigned int)i; /* covers no measured WR */
		wr.wr.atomic.remote_addr = d->q[i].rem_addr;
		wr.wr.atomic.rkey = d->q[i].rem_rkey;
		memset(res, 0xff, 8);
		rc = iwarp_post_send(d->q[i].qp, &wr, &bad_wr);
		if (rc) {
			fprintf(stderr,
				" iwarp_bw: iwarp_post_send (counter read-back): %s\n",
				iwarp_strerror(rc));
			return rc;
		}
		rc = bw_poll_one(d->scq, d->inline_progress, &wc);
		if (rc)
			return rc;
		if (wc.status != IWARP_WC_SUCCESS) {
			fprintf(stderr,
				" iwarp_bw: counter read-back failed: %s\n",
				iwarp_wc_status_str(wc.status));
			return -EIO;
		}
		memcpy(&v, res, sizeof(v));
		if (v != want) {
			fprintf(stderr,
				" iwarp_bw: data check failed: QP %d target counter is %llu after %s, expected %llu\n",
				i, (unsigned long long)v, bw_atomic_name(o),
				(unsigned long long)want);
			bad = 1;
		}
	}
	return bad ? -EBADMSG : 0;
}
