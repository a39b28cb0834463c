/*
 * tests/synth_capture.c: writes pcaps of synthetic iWARP connections built
 * only with libiwarp's encoders, for the tshark / iwarp_decode round trip
 * (tests/tshark_roundtrip.sh).
 *
 *   synth_capture OUT.pcap EXPECT.txt
 *
 * Connection 1: MPA rev 1, markers both ways, CRC on.
 * Connection 2: MPA rev 2 enhanced (IRD/ORD), no markers, CRC on.
 * Connection 3: MPA rev 2 enhanced, no markers, CRC off.
 * Each carries rping-like traffic: Sends, a Read Request and its Read
 * Response, a multi-segment RDMA Write, Send with SE, Send with Invalidate,
 * and a bare Terminate at the end. Every FPDU is one TCP segment (Wireshark
 * 4.0 needs that for markers). EXPECT.txt gets one line per FPDU:
 * "<conn> <dir> <opcode> <ulpdu_len>".
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddp/ddp_segment.h"
#include "mpa/mpa_rr.h"
#include "mpa/mpa_tx.h"
#include "pcap_writer.h"
#include "rdmap/rdmap_opcode.h"
#include "rdmap/rdmap_rreq.h"
#include "rdmap/rdmap_term.h"

#define FPDU_BUDGET 1460 /* a 1500-MTU TCP segment */

struct side {
	struct mpa_tx tx;
	struct ddp_tx_queues q;
};

struct conn {
	int id;
	struct pcapw_conn pc;
	struct side s[2];
	FILE *expect;
};

static uint8_t payload[70000];

static void die(const char *what, int rc)
{
	fprintf(stderr, "synth_capture: %s failed (%d)\n", what, rc);
	exit(1);
}

/* Frames one ULPDU (header + payload) as one FPDU in its own segment. */
static void send_fpdu(struct conn *c, int from, const uint8_t *hdr,
		      size_t hdr_len, const uint8_t *data, size_t len)
{
	static struct mpa_tx_scratch scratch;
	static struct iovec iov[MPA_TX_IOV_MAX(2, MPA_MAX_FPDU_MARKERS)];
	static uint8_t wire[70000 + 1024];
	struct iovec ulpdu[2] = {{(void *)hdr, hdr_len}, {(void *)data, len}};
	size_t cnt = 0, off = 0, i;
	int n = mpa_tx_frame(&c->s[from].tx, ulpdu, len ? 2 : 1, &scratch, iov,
			     sizeof(iov) / sizeof(iov[0]), &cnt);

	if (n < 0)
		die("mpa_tx_frame", n);
	for (i = 0; i < cnt; i++) {
		memcpy(wire + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	if (off != (size_t)n)
		die("wire length", (int)off);
	n = pcapw_send(&c->pc, from, wire, off);
	if (n < 0)
		die("pcapw_send", n);
	fprintf(c->expect, "%d %d %u %zu\n", c->id, from, hdr[1] & 0x0fu,
		hdr_len + len);
}

/* Segments and sends one message; tagged when |stag| != 0 for opcode 0/2. */
static void send_msg(struct conn *c, int from, uint8_t opcode, uint32_t stag,
		     uint64_t to, uint32_t inv, const uint8_t *data,
		     uint32_t len)
{
	struct side *s = &c->s[from];
	struct ddp_seg_iter it;
	struct ddp_seg seg;
	uint32_t msn;
	int rc;

	if (opcode == RDMAP_OP_WRITE || opcode == RDMAP_OP_READ_RESPONSE) {
		rc = ddp_seg_init_tagged(&it, opcode, stag, to, len);
	} else {
		uint32_t qn = rdmap_opcode_get(opcode)->qn;

		rc = ddp_tx_msn_alloc(&s->q, qn, &msn);
		if (!rc)
			rc = ddp_seg_init_untagged(&it, opcode, qn, msn, inv,
						   len);
	}
	if (rc)
		die("ddp_seg_init", rc);
	for (;;) {
		int max = mpa_tx_max_ulpdu(&s->tx, FPDU_BUDGET);

		if (max < 0)
			die("mpa_tx_max_ulpdu", max);
		rc = ddp_seg_next(&it, (size_t)max, &seg);
		if (rc < 0)
			die("ddp_seg_next", rc);
		if (rc == 0)
			break;
		send_fpdu(c, from, seg.hdr_bytes, seg.hdr_len,
			  data + seg.offset, seg.len);
	}
}

static void send_rr(struct conn *c, int from, int rev, bool markers, bool crc,
		    bool reply)
{
	struct mpa_rr rr;
	uint8_t buf[MPA_RR_FRAME_MAX];
	int n;

	memset(&rr, 0, sizeof(rr));
	rr.kind = reply ? MPA_RR_REPLY : MPA_RR_REQUEST;
	rr.m = markers;
	rr.c = crc;
	rr.rev = (uint8_t)rev;
	if (rev == 2) {
		rr.enhanced = true;
		rr.has_ird_ord = true;
		rr.ird = 1;
		rr.ord = 1;
	}
	n = mpa_rr_encode(buf, sizeof(buf), &rr);
	if (n < 0)
		die("mpa_rr_encode", n);
	n = pcapw_send(&c->pc, from, buf, (size_t)n);
	if (n < 0)
		die("pcapw_send", n);
}

static void run_conn(struct pcapw *w, FILE *expect, int id, int rev,
		     bool markers, bool crc)
{
	struct conn c;
	struct rdmap_rreq rr = {0x2201, 0x10000, 64, 0x3301, 0x20000};
	struct rdmap_term t;
	uint8_t ctl[16], rrmsg[RDMAP_RREQ_MSG_LEN], term[RDMAP_TERM_MAX_LEN];
	int i, n;

	memset(&c, 0, sizeof(c));
	c.id = id;
	c.expect = expect;
	if (pcapw_connect(w, &c.pc, (uint16_t)(40000 + id), 7174))
		die("pcapw_connect", 0);
	send_rr(&c, 0, rev, markers, crc, false);
	send_rr(&c, 1, rev, markers, crc, true);
	for (i = 0; i < 2; i++) {
		/* markers toward a side exist when that side set M (both did)
		 */
		if (mpa_tx_init(&c.s[i].tx, markers, crc, 0))
			die("mpa_tx_init", 0);
		ddp_tx_queues_init(&c.s[i].q);
	}
	/* rping-like: control Send, Read Request, Read Response, go-ahead */
	memset(ctl, 0xab, sizeof(ctl));
	send_msg(&c, 0, RDMAP_OP_SEND, 0, 0, 0, ctl, sizeof(ctl));
	n = (int)rdmap_rreq_msg_encode(rrmsg, 1, &rr);
	send_fpdu(&c, 1, rrmsg, (size_t)n, NULL, 0);
	send_msg(&c, 0, RDMAP_OP_READ_RESPONSE, rr.sink_stag, rr.sink_to, 0,
		 payload, rr.size);
	send_msg(&c, 1, RDMAP_OP_SEND, 0, 0, 0, ctl, 4);
	/* sizes around marker and segment boundaries */
	send_msg(&c, 0, RDMAP_OP_WRITE, 0x4401, 0x1000, 0, payload, 3000);
	send_msg(&c, 0, RDMAP_OP_SEND_SE, 0, 0, 0, payload, 1);
	send_msg(&c, 0, RDMAP_OP_SEND_INV, 0, 0, 0x5501, payload, 513);
	send_msg(&c, 1, RDMAP_OP_WRITE, 0x6601, 0, 0, payload, 0);
	send_msg(&c, 1, RDMAP_OP_SEND_SE_INV, 0, 0, 0x7701, payload, 511);
	send_msg(&c, 0, RDMAP_OP_SEND, 0, 0, 0, payload, 4095);
	/* a bare Terminate (LLP/MPA: TCP stream lost) from the server */
	memset(&t, 0, sizeof(t));
	t.cause.layer = IWARP_TERM_LAYER_LLP;
	t.cause.etype = IWARP_LLP_ETYPE_MPA;
	t.cause.ecode = IWARP_LLP_ECODE_STREAM_LOST;
	n = rdmap_term_encode(term, sizeof(term), 1, &t);
	if (n < 0)
		die("rdmap_term_encode", n);
	send_fpdu(&c, 1, term, (size_t)n, NULL, 0);
	if (pcapw_close(&c.pc))
		die("pcapw_close", 0);
}

int main(int argc, char **argv)
{
	struct pcapw w;
	FILE *expect;
	size_t i;

	if (argc != 3) {
		fprintf(stderr, "usage: synth_capture OUT.pcap EXPECT.txt\n");
		return 2;
	}
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)('A' + i % 58);
	if (pcapw_open(&w, argv[1]))
		die("pcapw_open", 0);
	expect = fopen(argv[2], "w");
	if (!expect)
		die("fopen", 0);
	run_conn(&w, expect, 1, 1, true, true);
	run_conn(&w, expect, 2, 2, false, true);
	run_conn(&w, expect, 3, 2, false, false);
	fclose(expect);
	if (pcapw_finish(&w))
		die("pcapw_finish", 0);
	return 0;
}
