/*
 * tools/decode/fpdu.c: FPDU framing with markers and CRC (see fpdu.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fpdu.h"
#include "iwarp/iwarp.h"
#include "mpa/mpa_marker.h"
#include "util/bytes.h"
#include "util/crc32c.h"
#include "util/mem.h"

/* Largest FPDU content (2 + 65535 + 1 + 4) and wire image (+ markers). */
#define FPDU_CONTENT_MAX (MPA_LEN_FIELD + MPA_MAX_ULPDU + 1 + MPA_CRC_LEN)
#define FPDU_WIRE_MAX                                                          \
	(FPDU_CONTENT_MAX + (MPA_MAX_FPDU_MARKERS + 1) * MPA_MARKER_LEN)

/* (Re)starts mpa_rx at the current position, an FPDU boundary. */
static void lib_start(struct dec_fpdu_rx *rx)
{
	struct mpa_rx_cfg cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.markers = rx->markers;
	cfg.crc = rx->crc_on;
	cfg.start_pos = rx->pos - rx->base;
	rx->lib_ok = mpa_rx_init(&rx->lib, &cfg) == 0;
	rx->lib_err = 0;
	rx->lib_done = 0;
}

/* Feeds |len| octets to mpa_rx, recording FPDU_DONE events and errors. */
static void lib_feed(struct dec_fpdu_rx *rx, const uint8_t *p, size_t len)
{
	struct mpa_rx_event ev;
	ssize_t n;

	while (rx->lib_ok && !rx->lib_err && len > 0) {
		n = mpa_rx_process(&rx->lib, p, len, &ev);
		if (n < 0) {
			rx->lib_err = (int)n;
			return;
		}
		p += n;
		len -= (size_t)n;
		if (ev.type == MPA_RX_FPDU_DONE) {
			rx->lib_done++;
			rx->lib_len = ev.ulpdu_len;
		}
	}
}

/*
 * The verdict mpa_rx should have reached for |f|: FPDU_DONE once with the
 * same ULPDU_Length, or IWARP_ERR_MPA_MARKER / IWARP_ERR_MPA_CRC.
 */
static void lib_compare(struct dec_fpdu_rx *rx, struct dec_fpdu *f)
{
	int want = 0;

	f->lib_agrees = true;
	if (!rx->lib_ok)
		return;
	if (f->marker_bad)
		want = IWARP_ERR_MPA_MARKER;
#ifndef IWARP_FUZZING
	else if (rx->crc_on && f->crc_field != f->crc_calc)
		want = IWARP_ERR_MPA_CRC;
#endif
	if (want != rx->lib_err ||
	    (!want && (rx->lib_done != 1 || rx->lib_len != f->ulpdu_len))) {
		f->lib_agrees = false;
		snprintf(f->lib_text, sizeof(f->lib_text),
			 "mpa_rx: %s, %u FPDU_DONE (ULPDU_Length %u); "
			 "expected %s",
			 rx->lib_err ? iwarp_strerror(rx->lib_err) : "no error",
			 rx->lib_done, rx->lib_len,
			 want ? iwarp_strerror(want) : "one FPDU_DONE");
	}
	if (rx->lib_err || !f->lib_agrees)
		lib_start(rx);
	rx->lib_done = 0;
}

int dec_fpdu_rx_init(struct dec_fpdu_rx *rx, uint64_t base, bool markers,
		     bool crc)
{
	memset(rx, 0, sizeof(*rx));
	rx->markers = markers;
	rx->crc_on = crc;
	rx->base = base;
	rx->pos = base;
	lib_start(rx);
	rx->wire = iw_malloc(FPDU_WIRE_MAX);
	rx->content = iw_malloc(FPDU_CONTENT_MAX);
	if (!rx->wire || !rx->content) {
		dec_fpdu_rx_release(rx);
		return -ENOMEM;
	}
	return 0;
}

void dec_fpdu_rx_release(struct dec_fpdu_rx *rx)
{
	iw_free(rx->wire);
	iw_free(rx->content);
	rx->wire = NULL;
	rx->content = NULL;
}

static void start_fpdu(struct dec_fpdu_rx *rx, bool marker)
{
	rx->in_fpdu = true;
	rx->fpdu_off = rx->pos;
	rx->lead_marker = marker;
	rx->wire_len = 0;
	rx->content_len = 0;
	rx->need = 0;
	rx->nmarkers = 0;
	rx->marker_bad = false;
	rx->marker_text[0] = '\0';
}

/*
 * A marker's 4 octets are complete (the last one at rx->pos): check
 * Reserved = 0 and FPDUPTR (RFC 5044 §5, docs/interop-notes.md §11).
 */
static void check_marker(struct dec_fpdu_rx *rx)
{
	const uint8_t *m = rx->wire + rx->wire_len - MPA_MARKER_LEN;
	uint64_t mpos = rx->pos - (MPA_MARKER_LEN - 1);
	uint64_t dist = mpos - rx->fpdu_off;
	uint16_t rsvd = iw_get_u16be(m), ptr = iw_get_u16be(m + 2);
	bool ok = ptr == dist || (rx->lead_marker && dist >= MPA_MARKER_LEN &&
				  ptr == dist - MPA_MARKER_LEN);

	rx->nmarkers++;
	if (rx->marker_bad)
		return;
	if (rsvd != 0) {
		rx->marker_bad = true;
		snprintf(rx->marker_text, sizeof(rx->marker_text),
			 "marker at off %llu: Reserved 0x%04x, must be 0",
			 (unsigned long long)mpos, rsvd);
	} else if (!ok) {
		rx->marker_bad = true;
		snprintf(rx->marker_text, sizeof(rx->marker_text),
			 "marker at off %llu: FPDUPTR %u, expected %llu "
			 "(marker and ULPDU_Length mismatch)",
			 (unsigned long long)mpos, ptr,
			 (unsigned long long)dist);
	}
}

static void finish_fpdu(struct dec_fpdu_rx *rx, dec_fpdu_fn fn, void *ctx,
			const uint8_t *chunk, size_t chunk_len)
{
	struct dec_fpdu f;

	memset(&f, 0, sizeof(f));
	f.off = rx->fpdu_off;
	f.wire_len = rx->wire_len;
	f.ulpdu_len = iw_get_u16be(rx->content);
	f.ulpdu = rx->content + MPA_LEN_FIELD;
	f.crc_field = iw_get_u32le(rx->content + rx->content_len - MPA_CRC_LEN);
	/* RFC 5044 §6: the CRC covers the whole FPDU but the CRC field. */
	f.crc_calc = crc32c(rx->wire, rx->wire_len - MPA_CRC_LEN);
	f.markers = rx->nmarkers;
	f.marker_bad = rx->marker_bad;
	memcpy(f.marker_text, rx->marker_text, sizeof(f.marker_text));
	lib_feed(rx, chunk, chunk_len);
	lib_compare(rx, &f);
	rx->in_fpdu = false;
	if (fn)
		fn(ctx, &f);
}

void dec_fpdu_rx_feed(struct dec_fpdu_rx *rx, const uint8_t *data, size_t len,
		      dec_fpdu_fn fn, void *ctx)
{
	size_t i, fed = 0;

	for (i = 0; i < len; i++, rx->pos++) {
		uint64_t rel = rx->pos - rx->base;
		uint8_t b = data[i];

		if (rx->markers && rel % MPA_MARKER_INTERVAL < MPA_MARKER_LEN) {
			if (!rx->in_fpdu)
				start_fpdu(rx, true);
			rx->wire[rx->wire_len++] = b;
			if (rel % MPA_MARKER_INTERVAL == MPA_MARKER_LEN - 1)
				check_marker(rx);
			continue;
		}
		if (!rx->in_fpdu)
			start_fpdu(rx, false);
		rx->wire[rx->wire_len++] = b;
		rx->content[rx->content_len++] = b;
		if (rx->content_len == MPA_LEN_FIELD)
			rx->need =
				mpa_fpdu_content_len(iw_get_u16be(rx->content));
		if (rx->need && rx->content_len == rx->need) {
			rx->pos++;
			finish_fpdu(rx, fn, ctx, data + fed, i + 1 - fed);
			fed = i + 1;
			rx->pos--;
		}
	}
	lib_feed(rx, data + fed, len - fed);
}

bool dec_fpdu_rx_partial(const struct dec_fpdu_rx *rx, uint64_t *off,
			 size_t *have, size_t *need)
{
	if (!rx->in_fpdu || rx->content_len == 0)
		return false;
	*off = rx->fpdu_off;
	*have = rx->content_len;
	*need = rx->need;
	return true;
}
