/*
 * mpa/mpa_tx.c: MPA FPDU transmit framing (RFC 5044 §4-6), zero copy.
 */
#include "config.h"

#include <errno.h>

#include "mpa/mpa_tx.h"
#include "util/bytes.h"
#include "util/crc32c.h"

/* One FPDU being laid out into iovecs, octet run by octet run. */
struct tx_walk {
	struct iovec *iov;
	size_t cap;
	size_t first;	/* first iovec of this FPDU */
	size_t cnt;	/* iovecs used so far */
	uint64_t start; /* stream position of the FPDU's first octet */
	uint64_t pos;	/* stream position of the next octet */
	uint8_t (*marks)[MPA_MARKER_LEN];
	size_t nmarkers;
	bool markers;
	bool crc_on;
	uint32_t crc; /* running CRC-32C, un-finalised */
};

int mpa_tx_init(struct mpa_tx *tx, bool markers, bool crc, uint64_t start_pos)
{
	if (markers && start_pos % MPA_MARKER_INTERVAL != 0 &&
	    start_pos % MPA_MARKER_INTERVAL < MPA_MARKER_LEN)
		return -EINVAL;
	tx->pos = start_pos;
	tx->markers = markers;
	tx->crc = crc;
	return 0;
}

size_t mpa_tx_iov_bound(const struct mpa_tx *tx, size_t ulpdu_len, size_t n)
{
	return MPA_TX_IOV_MAX(
		n, mpa_fpdu_markers(tx->pos, ulpdu_len, tx->markers));
}

size_t mpa_tx_wire_len(const struct mpa_tx *tx, size_t ulpdu_len)
{
	return mpa_fpdu_wire_len(tx->pos, ulpdu_len, tx->markers);
}

int mpa_tx_max_ulpdu(const struct mpa_tx *tx, size_t fpdu_budget)
{
	return mpa_max_ulpdu(tx->pos, fpdu_budget, tx->markers);
}

/* Append one iovec, merged with the previous one of this FPDU if adjacent. */
static int walk_emit(struct tx_walk *w, uint8_t *base, size_t len)
{
	struct iovec *last;

	if (w->cnt > w->first) {
		last = &w->iov[w->cnt - 1];
		if ((uint8_t *)last->iov_base + last->iov_len == base) {
			last->iov_len += len;
			return 0;
		}
	}
	if (w->cnt == w->cap)
		return -ENOSPC;
	w->iov[w->cnt].iov_base = base;
	w->iov[w->cnt].iov_len = len;
	w->cnt++;
	return 0;
}

/* Emit the marker that starts at w->pos (RFC 5044 §5). */
static int walk_marker(struct tx_walk *w)
{
	uint8_t *mk;
	int rc;

	if (w->nmarkers == MPA_MAX_FPDU_MARKERS)
		return -EINVAL; /* cannot happen for ULPDUs <= 65535 */
	mk = w->marks[w->nmarkers++];
	/* Reserved(16) = 0 | FPDUPTR(16), counted from the FPDU's first octet
	 * (its leading marker if any: docs/interop-notes.md §11); 16 bits on
	 * the wire. */
	iw_put_u16be(mk, 0);
	iw_put_u16be(mk + 2, (uint16_t)(w->pos - w->start));
	rc = walk_emit(w, mk, MPA_MARKER_LEN);
	if (rc < 0)
		return rc;
	/* markers are covered by the CRC (RFC 5044 §6) */
	if (w->crc_on)
		w->crc = crc32c_update(w->crc, mk, MPA_MARKER_LEN);
	w->pos += MPA_MARKER_LEN;
	return 0;
}

/*
 * Lay out |len| FPDU content octets at |base|, inserting a marker before
 * every content octet at a marker position. |covered|: part of the CRC.
 */
static int walk_piece(struct tx_walk *w, uint8_t *base, size_t len,
		      bool covered)
{
	size_t k, room;
	int rc;

	while (len > 0) {
		if (w->markers && mpa_marker_at(w->pos)) {
			rc = walk_marker(w);
			if (rc < 0)
				return rc;
			continue;
		}
		k = len;
		if (w->markers) {
			room = MPA_MARKER_INTERVAL -
			       (size_t)(w->pos % MPA_MARKER_INTERVAL);
			if (k > room)
				k = room;
		}
		rc = walk_emit(w, base, k);
		if (rc < 0)
			return rc;
		if (covered && w->crc_on)
			w->crc = crc32c_update(w->crc, base, k);
		base += k;
		len -= k;
		w->pos += k;
	}
	return 0;
}

int mpa_tx_frame_parts(struct mpa_tx *tx, const struct iovec *ulpdu, size_t n,
		       struct mpa_tx_fixed *fixed,
		       uint8_t (*marks)[MPA_MARKER_LEN], struct iovec *iov,
		       size_t iov_cap, size_t *iovcnt)
{
	struct tx_walk w;
	size_t len = 0, pad, i;
	int rc;

	for (i = 0; i < n; i++) {
		if (ulpdu[i].iov_len > MPA_MAX_ULPDU - len)
			return -EINVAL; /* 16-bit ULPDU_Length (RFC 5044 §4.1)
					 */
		len += ulpdu[i].iov_len;
	}
	if (*iovcnt > iov_cap || (tx->markers && !marks))
		return -EINVAL;
	pad = mpa_pad_len(len);

	iw_put_u16be(fixed->len, (uint16_t)len);
	iw_put_u32be(fixed->trailer, 0); /* pad octets are zero */

	w.iov = iov;
	w.cap = iov_cap;
	w.first = *iovcnt;
	w.cnt = *iovcnt;
	w.start = tx->pos;
	w.pos = tx->pos;
	w.marks = marks;
	w.nmarkers = 0;
	w.markers = tx->markers;
	w.crc_on = tx->crc;
	w.crc = CRC32C_SEED;

	/* ULPDU_Length | ULPDU | PAD | CRC (RFC 5044 §4.1) */
	rc = walk_piece(&w, fixed->len, MPA_LEN_FIELD, true);
	for (i = 0; i < n && rc == 0; i++)
		rc = walk_piece(&w, ulpdu[i].iov_base, ulpdu[i].iov_len, true);
	if (rc == 0)
		rc = walk_piece(&w, fixed->trailer + 4 - pad, pad, true);
	if (rc == 0)
		rc = walk_piece(&w, fixed->trailer + 4, MPA_CRC_LEN, false);
	if (rc < 0)
		return rc;

	/* CRC-32C stored little-endian; 0 when CRC is off (RFC 5044 §6) */
	iw_put_u32le(fixed->trailer + 4, tx->crc ? crc32c_final(w.crc) : 0);
	tx->pos = w.pos;
	*iovcnt = w.cnt;
	return (int)(w.pos - w.start);
}

int mpa_tx_frame(struct mpa_tx *tx, const struct iovec *ulpdu, size_t n,
		 struct mpa_tx_scratch *s, struct iovec *iov, size_t iov_cap,
		 size_t *iovcnt)
{
	return mpa_tx_frame_parts(tx, ulpdu, n, &s->fixed, s->marker, iov,
				  iov_cap, iovcnt);
}
