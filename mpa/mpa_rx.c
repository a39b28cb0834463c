/*
 * mpa/mpa_rx.c: resumable MPA FPDU deframer (RFC 5044 §4-6).
 *
 * Markers are found by stream position only, so they are stripped wherever
 * they fall; every other octet belongs to the unit of the current state.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "iwarp/iwarp.h"
#include "mpa/mpa_rx.h"
#include "util/bytes.h"
#include "util/crc32c.h"

/*
 * The one place CRC checking is relaxed: fuzz builds (-DIWARP_FUZZING)
 * accept any CRC, since a fuzzer cannot compute CRCs and would otherwise
 * never get past the first FPDU.
 */
static bool rx_crc_matches(uint32_t want, uint32_t got)
{
#ifdef IWARP_FUZZING
	(void)want;
	(void)got;
	return true;
#else
	return want == got;
#endif
}

static int rx_fail(struct mpa_rx *rx, int err)
{
	rx->err = err;
	return err;
}

int mpa_rx_init(struct mpa_rx *rx, const struct mpa_rx_cfg *cfg)
{
	uint64_t off = cfg->start_pos % MPA_MARKER_INTERVAL;

	if (cfg->markers && off != 0 && off < MPA_MARKER_LEN)
		return -EINVAL;
	memset(rx, 0, sizeof(*rx));
	rx->markers = cfg->markers;
	rx->crc_on = cfg->crc;
	rx->max_ulpdu =
		cfg->max_ulpdu ? cfg->max_ulpdu : (uint16_t)MPA_MAX_ULPDU;
	rx->hdr_len_fn = cfg->hdr_len;
	rx->ulp = cfg->ulp;
	rx->pos = cfg->start_pos;
	rx->fpdu_start = cfg->start_pos;
	rx->state = MPA_RX_GET_LEN;
	return 0;
}

/* True when the next stream octet is part of a marker (RFC 5044 §5). */
static bool rx_in_marker(const struct mpa_rx *rx)
{
	return rx->markers && rx->pos % MPA_MARKER_INTERVAL < MPA_MARKER_LEN;
}

/* Content octets before the next marker (or |avail| without markers). */
static size_t rx_room(const struct mpa_rx *rx, size_t avail)
{
	size_t room;

	if (!rx->markers)
		return avail;
	room = MPA_MARKER_INTERVAL - (size_t)(rx->pos % MPA_MARKER_INTERVAL);
	return avail < room ? avail : room;
}

/* The first octet of an FPDU (its leading marker or its length field). */
static void rx_start_fpdu(struct mpa_rx *rx, bool lead_marker)
{
	rx->in_fpdu = true;
	rx->lead_marker = lead_marker;
	rx->fpdu_start = rx->pos;
	rx->crc = CRC32C_SEED; /* the CRC restarts at each FPDU (RFC 5044 §6) */
	rx->state = MPA_RX_GET_LEN;
	rx->got = 0;
}

static void rx_crc(struct mpa_rx *rx, const uint8_t *p, size_t k)
{
	if (rx->crc_on)
		rx->crc = crc32c_update(rx->crc, p, k);
}

/*
 * |k| octets of the marker at rx->pos (k <= octets left in it). A marker
 * between FPDUs leads the next one. Validates a completed marker.
 */
static int rx_marker_octets(struct mpa_rx *rx, const uint8_t *p, size_t k)
{
	size_t off = (size_t)(rx->pos % MPA_MARKER_INTERVAL);
	uint64_t mpos;
	uint16_t ptr, want;

	if (!rx->in_fpdu)
		rx_start_fpdu(rx, true);
	memcpy(rx->mk + off, p, k);
	rx_crc(rx, p, k); /* markers are covered by the CRC (RFC 5044 §6) */
	rx->pos += k;
	rx->mk_got = (uint8_t)(off + k);
	if (rx->mk_got < MPA_MARKER_LEN)
		return 0;
	rx->mk_got = 0;

	/*
	 * RFC 5044 §5: Reserved(16) = 0, FPDUPTR(16) = octets from the FPDU's
	 * start to the marker. For an FPDU that starts with a marker, later
	 * markers may count from the leading marker or from the length field
	 * (docs/interop-notes.md §11): accept both. Otherwise LLP 0x03.
	 */
	mpos = rx->pos - MPA_MARKER_LEN;
	ptr = iw_get_u16be(rx->mk + 2);
	want = (uint16_t)(mpos - rx->fpdu_start);
	if (iw_get_u16be(rx->mk) != 0)
		return rx_fail(rx, IWARP_ERR_MPA_MARKER);
	if (ptr == want)
		return 0;
	if (rx->lead_marker && mpos != rx->fpdu_start &&
	    ptr == (uint16_t)(want - MPA_MARKER_LEN))
		return 0;
	return rx_fail(rx, IWARP_ERR_MPA_MARKER);
}

/* ULPDU_Length complete: check it and set up the header unit. */
static int rx_got_len(struct mpa_rx *rx)
{
	rx->ulpdu_len = iw_get_u16be(rx->len_buf);
	if (rx->ulpdu_len > rx->max_ulpdu)
		return rx_fail(rx, IWARP_ERR_MPA_ULPDU_LENGTH);
	rx->pad_len = mpa_pad_len(rx->ulpdu_len);
	rx->state = MPA_RX_GET_HDR;
	rx->got = 0;
	rx->hdr_known = !rx->hdr_len_fn || rx->ulpdu_len == 0;
	rx->hdr_need = 0;
	return 0;
}

/* The first min(2, ULPDU_Length) octets are in: ask the ULP. */
static void rx_decide_hdr(struct mpa_rx *rx)
{
	uint8_t first2[2] = {0, 0};
	size_t n;

	memcpy(first2, rx->hdr, rx->got);
	n = rx->hdr_len_fn(rx->ulp, first2, rx->ulpdu_len);
	if (n < rx->got)
		n = rx->got;
	if (n > rx->ulpdu_len)
		n = rx->ulpdu_len;
	if (n > MPA_RX_HDR_MAX)
		n = MPA_RX_HDR_MAX;
	rx->hdr_need = n;
	rx->hdr_known = true;
}

static void rx_after_payload(struct mpa_rx *rx)
{
	rx->state = rx->pad_len ? MPA_RX_GET_PAD : MPA_RX_GET_CRC;
	rx->got = 0;
}

/* Header complete: report it and move on to the payload. */
static void rx_header_done(struct mpa_rx *rx, struct mpa_rx_event *ev)
{
	ev->type = MPA_RX_HEADER;
	ev->ulpdu_len = rx->ulpdu_len;
	ev->hdr = rx->hdr;
	ev->hdr_len = rx->hdr_need;
	rx->pay_len = rx->ulpdu_len - rx->hdr_need;
	rx->pay_got = 0;
	if (rx->pay_len > 0) {
		rx->state = MPA_RX_GET_PAYLOAD;
		rx->got = 0;
	} else {
		rx_after_payload(rx);
	}
}

/* CRC field complete: verify (RFC 5044 §6); ignored when CRC is off. */
static int rx_check_crc(struct mpa_rx *rx)
{
	if (!rx->crc_on)
		return 0;
	if (!rx_crc_matches(crc32c_final(rx->crc), iw_get_u32le(rx->crc_buf)))
		return rx_fail(rx, IWARP_ERR_MPA_CRC);
	return 0;
}

ssize_t mpa_rx_process(struct mpa_rx *rx, const uint8_t *in, size_t len,
		       struct mpa_rx_event *ev)
{
	size_t i = 0, k, need;
	int rc;

	memset(ev, 0, sizeof(*ev));
	ev->type = MPA_RX_NEED_MORE;
	if (rx->err)
		return rx->err;
	rx->dp_valid = false;

	while (i < len) {
		if (rx_in_marker(rx)) {
			k = MPA_MARKER_LEN -
			    (size_t)(rx->pos % MPA_MARKER_INTERVAL);
			if (k > len - i)
				k = len - i;
			rc = rx_marker_octets(rx, in + i, k);
			if (rc < 0)
				return rc;
			i += k;
			continue;
		}
		if (!rx->in_fpdu)
			rx_start_fpdu(rx, false);
		k = rx_room(rx, len - i);

		switch (rx->state) {
		case MPA_RX_GET_LEN:
			if (k > MPA_LEN_FIELD - rx->got)
				k = MPA_LEN_FIELD - rx->got;
			memcpy(rx->len_buf + rx->got, in + i, k);
			rx_crc(rx, in + i, k);
			rx->pos += k;
			rx->got += k;
			i += k;
			if (rx->got < MPA_LEN_FIELD)
				break;
			rc = rx_got_len(rx);
			if (rc < 0)
				return rc;
			if (rx->hdr_known) { /* no header octets to gather */
				rx_header_done(rx, ev);
				return (ssize_t)i;
			}
			break;

		case MPA_RX_GET_HDR:
			need = rx->hdr_known
				       ? rx->hdr_need
				       : (rx->ulpdu_len < 2 ? rx->ulpdu_len
							    : 2);
			if (k > need - rx->got)
				k = need - rx->got;
			memcpy(rx->hdr + rx->got, in + i, k);
			rx_crc(rx, in + i, k);
			rx->pos += k;
			rx->got += k;
			i += k;
			if (rx->got < need)
				break;
			if (!rx->hdr_known) {
				rx_decide_hdr(rx);
				if (rx->got < rx->hdr_need)
					break;
			}
			rx_header_done(rx, ev);
			return (ssize_t)i;

		case MPA_RX_GET_PAYLOAD:
			if (k > rx->pay_len - rx->pay_got)
				k = rx->pay_len - rx->pay_got;
			ev->type = MPA_RX_PAYLOAD;
			ev->ulpdu_len = rx->ulpdu_len;
			ev->data = in + i;
			ev->data_len = k;
			ev->data_off = rx->pay_got;
			rx_crc(rx, in + i, k);
			rx->pos += k;
			rx->pay_got += k;
			i += k;
			if (rx->pay_got == rx->pay_len)
				rx_after_payload(rx);
			return (ssize_t)i;

		case MPA_RX_GET_PAD:
			/* pad content is not checked, only CRC'd (RFC 5044
			 * §4.1) */
			if (k > rx->pad_len - rx->got)
				k = rx->pad_len - rx->got;
			rx_crc(rx, in + i, k);
			rx->pos += k;
			rx->got += k;
			i += k;
			if (rx->got == rx->pad_len) {
				rx->state = MPA_RX_GET_CRC;
				rx->got = 0;
			}
			break;

		case MPA_RX_GET_CRC:
			if (k > MPA_CRC_LEN - rx->got)
				k = MPA_CRC_LEN - rx->got;
			memcpy(rx->crc_buf + rx->got, in + i, k);
			rx->pos += k;
			rx->got += k;
			i += k;
			if (rx->got < MPA_CRC_LEN)
				break;
			rc = rx_check_crc(rx);
			if (rc < 0)
				return rc;
			ev->type = MPA_RX_FPDU_DONE;
			ev->ulpdu_len = rx->ulpdu_len;
			rx->in_fpdu = false;
			rx->state = MPA_RX_GET_LEN;
			rx->got = 0;
			return (ssize_t)i;
		}
	}
	return (ssize_t)i;
}

int mpa_rx_payload_iov(struct mpa_rx *rx, void *dst, size_t dst_len,
		       struct iovec *iov, size_t iov_cap)
{
	uint8_t *d = dst;
	uint64_t pos = rx->pos;
	size_t want, placed = 0, total = 0, n = 0, nmk = 0, k, off;

	if (rx->err)
		return rx->err;
	rx->dp_valid = false;
	if (rx->state != MPA_RX_GET_PAYLOAD || dst_len == 0)
		return 0;
	if (iov_cap == 0)
		return -ENOSPC;
	want = rx->pay_len - rx->pay_got;
	if (want > dst_len)
		want = dst_len;

	while (placed < want && n < iov_cap) {
		off = (size_t)(pos % MPA_MARKER_INTERVAL);
		if (rx->markers && off < MPA_MARKER_LEN) {
			/* marker octets go to scratch (RFC 5044 §5) */
			if (nmk == MPA_MAX_FPDU_MARKERS || n + 1 == iov_cap)
				break; /* the layout must end with payload */
			k = MPA_MARKER_LEN - off;
			iov[n].iov_base = rx->dp_marker[nmk++] + off;
			iov[n++].iov_len = k;
		} else {
			k = want - placed;
			if (rx->markers && k > MPA_MARKER_INTERVAL - off)
				k = MPA_MARKER_INTERVAL - off;
			iov[n].iov_base = d + placed;
			iov[n++].iov_len = k;
			placed += k;
		}
		pos += k;
		total += k;
	}
	if (n == 0)
		return -ENOSPC; /* one iovec, and it would be a marker */
	rx->dp_valid = true;
	rx->dp_dst = d;
	rx->dp_total = total;
	return (int)n;
}

ssize_t mpa_rx_commit(struct mpa_rx *rx, size_t n)
{
	size_t left = n, placed = 0, nmk = 0, k, off;
	int rc;

	if (rx->err)
		return rx->err;
	if (!rx->dp_valid)
		return n == 0 ? 0 : -EINVAL;
	if (n > rx->dp_total)
		return -EINVAL;
	rx->dp_valid = false;

	/* walk the layout of mpa_rx_payload_iov() again, octet run by run */
	while (left > 0) {
		off = (size_t)(rx->pos % MPA_MARKER_INTERVAL);
		if (rx->markers && off < MPA_MARKER_LEN) {
			k = MPA_MARKER_LEN - off;
			if (k > left)
				k = left;
			rc = rx_marker_octets(rx, rx->dp_marker[nmk] + off, k);
			if (rc < 0)
				return rc;
			if (off + k == MPA_MARKER_LEN)
				nmk++;
			left -= k;
			continue;
		}
		k = rx_room(rx, left);
		if (k > rx->pay_len - rx->pay_got)
			k = rx->pay_len - rx->pay_got;
		if (k == 0)
			return -EINVAL; /* cannot happen: n <= dp_total */
		rx_crc(rx, rx->dp_dst + placed, k);
		rx->pos += k;
		rx->pay_got += k;
		placed += k;
		left -= k;
	}
	if (rx->pay_got == rx->pay_len)
		rx_after_payload(rx);
	return (ssize_t)placed;
}
