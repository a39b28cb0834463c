/*
 * tests/ws_plugin_capture.c: pcaps for tests/wireshark_plugin.sh, built at
 * the byte level straight from the RFCs so that they exercise what
 * synth_capture does not: several FPDUs coalesced in one TCP segment and
 * FPDUs split across segments with markers on, MPA rev 2 with the RFC 6581
 * peer-to-peer bits, the RFC 7306 messages, and a corrupted CRC.
 *
 *   ws_plugin_capture good OUT.pcap     connections 1 and 2 below
 *   ws_plugin_capture badcrc OUT.pcap   one Send whose CRC is wrong
 *   ws_plugin_capture badmarker OUT.pcap connection 1 with one marker's
 *                                        FPDUPTR wrong (CRC still good)
 *
 * Connection 1 (tcp.stream 0): MPA rev 1, M=1 and C=1 both ways. The
 *   initiator's FPDUs go out as one byte stream cut into segments of
 *   1000 octets (FPDUs coalesced and split, markers cut too); the
 *   responder's FPDUs are sent three per segment.
 * Connection 2 (tcp.stream 1): MPA rev 2 enhanced, no markers, C=1. The
 *   Request offers P2P with Write and Read RTRs (IRD 16, ORD 8), the
 *   Reply picks the Read RTR (IRD 8, ORD 16). Then a zero-length Read
 *   RTR (RFC 6581 §9.2), Immediate Data, Immediate Data with SE, two
 *   Atomic Requests and their Atomic Responses (RFC 7306 §5, §8).
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_writer.h"
#include "util/bytes.h"
#include "util/crc32c.h"

#define MARKER_INTERVAL 512u /* RFC 5044 §5 */

struct dir {
	bool markers, crc;
	uint32_t pos;	     /* stream position since the first FPDU */
	uint8_t out[200000]; /* wire octets not yet sent */
	size_t n;
	uint32_t msn[5]; /* next MSN per untagged QN (RFC 5041 §5.3) */
};

static struct dir dirs[2];
static struct pcapw_conn pc;
static uint8_t payload[8192];
static int bad_marker_at = -1; /* stream position of a marker to corrupt */

static void die(const char *what)
{
	fprintf(stderr, "ws_plugin_capture: %s failed\n", what);
	exit(1);
}

static void put_wire(struct dir *d, const uint8_t *b, size_t n)
{
	if (d->n + n > sizeof(d->out))
		die("buffer");
	memcpy(d->out + d->n, b, n);
	d->n += n;
}

/* One content octet run, with a marker wherever the stream position is a
 * multiple of 512 (RFC 5044 §5). FPDUPTR: octets from the FPDU's first
 * octet (its leading marker included) to the marker. */
static void put_content(struct dir *d, uint32_t fpdu_pos, const uint8_t *b,
			size_t n)
{
	while (n) {
		size_t k;

		if (d->markers && d->pos % MARKER_INTERVAL == 0) {
			uint8_t mk[4] = {0, 0, 0, 0};

			iw_put_u16be(mk + 2, (uint16_t)(d->pos - fpdu_pos));
			if ((int)d->pos == bad_marker_at)
				mk[3] ^= 0x04; /* before the CRC: only the
						  marker is wrong */
			put_wire(d, mk, 4);
			d->pos += 4;
		}
		k = d->markers ? MARKER_INTERVAL - d->pos % MARKER_INTERVAL : n;
		if (k > n)
			k = n;
		put_wire(d, b, k);
		d->pos += (uint32_t)k;
		b += k;
		n -= k;
	}
}

/* Frames one ULPDU (RFC 5044 §4.1): length, ULPDU, pad, CRC-32C over all
 * wire octets before the CRC field, markers included (RFC 5044 §6). */
static void fpdu(struct dir *d, const uint8_t *hdr, size_t hlen,
		 const uint8_t *data, size_t len, bool bad_crc)
{
	static const uint8_t zero[4];
	uint8_t l[2], crc[4];
	size_t ulen = hlen + len, pad = (4 - (2 + ulen) % 4) % 4, start = d->n,
	       crc_at;
	uint32_t fpdu_pos = d->pos, c;

	iw_put_u16be(l, (uint16_t)ulen);
	put_content(d, fpdu_pos, l, 2);
	put_content(d, fpdu_pos, hdr, hlen);
	if (len)
		put_content(d, fpdu_pos, data, len);
	put_content(d, fpdu_pos, zero, pad);
	/* a marker due right before the CRC field belongs to this FPDU */
	if (d->markers && d->pos % MARKER_INTERVAL == 0) {
		uint8_t mk[4] = {0, 0, 0, 0};

		iw_put_u16be(mk + 2, (uint16_t)(d->pos - fpdu_pos));
		put_wire(d, mk, 4);
		d->pos += 4;
	}
	crc_at = d->n;
	c = d->crc ? crc32c(d->out + start, crc_at - start) : 0;
	if (bad_crc)
		c ^= 0x00010000u;
	iw_put_u32le(crc, c);
	put_wire(d, crc, 4);
	d->pos += 4;
}

/* Untagged DDP + RDMAP header (RFC 5041 §4.3, RFC 5040 §4.2). */
static size_t untagged(uint8_t *h, bool last, uint8_t opcode, uint32_t ulp,
		       uint32_t qn, uint32_t msn, uint32_t mo)
{
	h[0] = (uint8_t)((last ? 0x40 : 0) | 0x01);
	h[1] = (uint8_t)(0x40 | opcode);
	iw_put_u32be(h + 2, ulp);
	iw_put_u32be(h + 6, qn);
	iw_put_u32be(h + 10, msn);
	iw_put_u32be(h + 14, mo);
	return 18;
}

/* Tagged DDP + RDMAP header (RFC 5041 §4.2). */
static size_t tagged(uint8_t *h, bool last, uint8_t opcode, uint32_t stag,
		     uint64_t to)
{
	h[0] = (uint8_t)(0x80 | (last ? 0x40 : 0) | 0x01);
	h[1] = (uint8_t)(0x40 | opcode);
	iw_put_u32be(h + 2, stag);
	iw_put_u64be(h + 6, to);
	return 14;
}

/* An untagged message in segments of at most |mss| payload octets. */
static void send_untagged(int from, uint8_t opcode, uint32_t qn, uint32_t ulp,
			  const uint8_t *data, size_t len, size_t mss)
{
	struct dir *d = &dirs[from];
	uint32_t msn = d->msn[qn]++;
	size_t mo = 0;

	do {
		uint8_t h[18 + 64];
		size_t k = len - mo > mss ? mss : len - mo;
		size_t hl = untagged(h, mo + k == len, opcode, ulp, qn, msn,
				     (uint32_t)mo);

		fpdu(d, h, hl, data + mo, k, false);
		mo += k;
	} while (mo < len);
}

static void send_tagged(int from, uint8_t opcode, uint32_t stag, uint64_t to,
			const uint8_t *data, size_t len, size_t mss)
{
	size_t mo = 0;

	do {
		uint8_t h[14];
		size_t k = len - mo > mss ? mss : len - mo;
		size_t hl = tagged(h, mo + k == len, opcode, stag, to + mo);

		fpdu(&dirs[from], h, hl, data + mo, k, false);
		mo += k;
	} while (mo < len);
}

/* Read Request (RFC 5040 §4.4): QN 1, 28 octets of header fields. */
static void send_read_req(int from, uint32_t sink_stag, uint64_t sink_to,
			  uint32_t size, uint32_t src_stag, uint64_t src_to)
{
	uint8_t b[28];

	iw_put_u32be(b, sink_stag);
	iw_put_u64be(b + 4, sink_to);
	iw_put_u32be(b + 12, size);
	iw_put_u32be(b + 16, src_stag);
	iw_put_u64be(b + 20, src_to);
	send_untagged(from, 1, 1, 0, b, sizeof(b), 4096);
}

/* Sends what is buffered in one direction as segments of |seg| octets. */
static void flush(int from, size_t seg)
{
	struct dir *d = &dirs[from];
	size_t o = 0;

	while (o < d->n) {
		size_t k = d->n - o > seg ? seg : d->n - o;

		if (pcapw_send(&pc, from, d->out + o, k) < 0)
			die("pcapw_send");
		o += k;
	}
	d->n = 0;
}

/* MPA Request/Reply (RFC 5044 §7.1.1; RFC 6581 §9.1 private data). */
static void send_rr(int from, bool m, bool c, int rev, bool enhanced,
		    uint16_t irdw, uint16_t ordw)
{
	uint8_t b[24];
	size_t n = 20;

	memcpy(b, from == 0 ? "MPA ID Req Frame" : "MPA ID Rep Frame", 16);
	b[16] = (uint8_t)((m ? 0x80 : 0) | (c ? 0x40 : 0) |
			  (enhanced ? 0x10 : 0));
	b[17] = (uint8_t)rev;
	iw_put_u16be(b + 18, enhanced ? 4 : 0);
	if (enhanced) {
		iw_put_u16be(b + 20, irdw);
		iw_put_u16be(b + 22, ordw);
		n = 24;
	}
	if (pcapw_send(&pc, from, b, n) < 0)
		die("pcapw_send");
}

static void reset_dirs(bool markers, bool crc)
{
	int i, q;

	for (i = 0; i < 2; i++) {
		memset(&dirs[i], 0, sizeof(dirs[i]));
		dirs[i].markers = markers;
		dirs[i].crc = crc;
		for (q = 0; q < 5; q++)
			dirs[i].msn[q] = 1; /* RFC 5041 §5.3: MSN starts at 1 */
	}
}

static void conn_markers(struct pcapw *w)
{
	uint8_t h[18];
	int i;

	if (pcapw_connect(w, &pc, 40101, 7174))
		die("pcapw_connect");
	send_rr(0, true, true, 1, false, 0, 0);
	send_rr(1, true, true, 1, false, 0, 0);
	reset_dirs(true, true);
	/* initiator: Sends of assorted sizes, a multi-FPDU Write, a Read
	 * Request */
	send_untagged(0, 3, 0, 0, payload, 16, 1400);
	send_untagged(0, 5, 0, 0, payload, 1, 1400);
	send_tagged(0, 0, 0x4401, 0x1000, payload, 3000, 1000);
	send_untagged(0, 4, 0, 0x5501, payload, 513, 1400);
	send_read_req(0, 0x2201, 0x10000, 700, 0x3301, 0x20000);
	for (i = 0; i < 6; i++)
		send_untagged(0, 3, 0, 0, payload + i, (size_t)(100 + 97 * i),
			      1400);
	flush(0, 1000);
	/* responder: Read Response in two FPDUs, Sends, three FPDUs a segment
	 */
	send_tagged(1, 2, 0x2201, 0x10000, payload, 700, 400);
	send_untagged(1, 3, 0, 0, payload, 4, 1400);
	flush(1, 1u << 20);
	for (i = 0; i < 6; i++)
		send_untagged(1, 3, 0, 0, payload, (size_t)(200 + 10 * i),
			      1400);
	/* a bare Terminate: LLP, MPA, TCP stream lost (RFC 5040 §4.8) */
	untagged(h, true, 7, 0, 2, 1, 0);
	{
		uint8_t t[4] = {0x20, 0x01, 0x00, 0x00};

		fpdu(&dirs[1], h, 18, t, 4, false);
	}
	flush(1, 1u << 20);
	if (pcapw_close(&pc))
		die("pcapw_close");
}

static void conn_rfc7306(struct pcapw *w)
{
	uint8_t h[14], a[52], r[12], imm[8];

	if (pcapw_connect(w, &pc, 40102, 7174))
		die("pcapw_connect");
	/* A | IRD 16, C D | ORD 8 (RFC 6581 §9.1) */
	send_rr(0, false, true, 2, true, 0x8000 | 16, 0x8000 | 0x4000 | 8);
	/* A | IRD 8, D | ORD 16: the Read RTR */
	send_rr(1, false, true, 2, true, 0x8000 | 8, 0x4000 | 16);
	reset_dirs(false, true);
	/* zero-length Read RTR and its zero-length Read Response (STag 1) */
	send_read_req(0, 1, 0, 0, 1, 0);
	flush(0, 1400);
	tagged(h, true, 2, 1, 0);
	fpdu(&dirs[1], h, 14, NULL, 0, false);
	flush(1, 1400);
	/* Immediate Data and Immediate Data with SE: QN 0, 8 octets (RFC 7306
	 * §5.1) */
	iw_put_u64be(imm, 0x1122334455667788ull);
	send_untagged(0, 8, 0, 0, imm, 8, 1400);
	iw_put_u64be(imm, 0xcafef00dull);
	send_untagged(0, 9, 0, 0, imm, 8, 1400);
	/* Atomic Requests on QN 3 (RFC 7306 §5.2.1): Fetch and Add, Compare and
	 * Swap */
	memset(a, 0, sizeof(a));
	iw_put_u32be(a, 0);	     /* Fetch and Add */
	iw_put_u32be(a + 4, 0x77);   /* Request Identifier */
	iw_put_u32be(a + 8, 0x6601); /* Remote STag */
	iw_put_u64be(a + 12, 0x8000);
	iw_put_u64be(a + 20, 5);
	iw_put_u64be(a + 28, ~0ull);
	send_untagged(0, 10, 3, 0, a, sizeof(a), 1400);
	iw_put_u32be(a, 2); /* Compare and Swap */
	iw_put_u32be(a + 4, 0x78);
	iw_put_u64be(a + 20, 9);
	iw_put_u64be(a + 36, 5);
	iw_put_u64be(a + 44, ~0ull);
	send_untagged(0, 10, 3, 0, a, sizeof(a), 1400);
	flush(0, 1400); /* all five in one segment */
	/* Atomic Responses on QN 4 (RFC 7306 §5.2.2) */
	iw_put_u32be(r, 0x77);
	iw_put_u64be(r + 4, 0);
	send_untagged(1, 11, 4, 0, r, sizeof(r), 1400);
	iw_put_u32be(r, 0x78);
	iw_put_u64be(r + 4, 5);
	send_untagged(1, 11, 4, 0, r, sizeof(r), 1400);
	flush(1, 1400);
	if (pcapw_close(&pc))
		die("pcapw_close");
}

static void conn_badcrc(struct pcapw *w)
{
	uint8_t h[18];

	if (pcapw_connect(w, &pc, 40103, 7174))
		die("pcapw_connect");
	send_rr(0, false, true, 1, false, 0, 0);
	send_rr(1, false, true, 1, false, 0, 0);
	reset_dirs(false, true);
	untagged(h, true, 3, 0, 0, 1, 0);
	fpdu(&dirs[0], h, 18, payload, 64, true);
	flush(0, 1400);
	if (pcapw_close(&pc))
		die("pcapw_close");
}

int main(int argc, char **argv)
{
	struct pcapw w;
	size_t i;

	if (argc != 3 ||
	    (strcmp(argv[1], "good") && strcmp(argv[1], "badcrc") &&
	     strcmp(argv[1], "badmarker"))) {
		fprintf(stderr, "usage: ws_plugin_capture "
				"good|badcrc|badmarker OUT.pcap\n");
		return 2;
	}
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)('a' + i % 26);
	if (pcapw_open(&w, argv[2]))
		die("pcapw_open");
	if (!strcmp(argv[1], "good")) {
		conn_markers(&w);
		conn_rfc7306(&w);
	} else if (!strcmp(argv[1], "badmarker")) {
		bad_marker_at = 1024; /* inside the 3000-octet Write */
		conn_markers(&w);
	} else {
		conn_badcrc(&w);
	}
	if (pcapw_finish(&w))
		die("pcapw_finish");
	return 0;
}
