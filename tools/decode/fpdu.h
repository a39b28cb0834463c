/*
 * tools/decode/fpdu.h: MPA FPDU framing for the validator (RFC 5044 §4-6).
 *
 * Unlike the library's receive path, the validator keeps every octet of
 * an FPDU as it was on the wire, so that it can report the CRC it found
 * and the one it computed, the value of a wrong marker, and keep going
 * after an error (a bad CRC does not lose the framing: the length is
 * known). Marker arithmetic comes from mpa/mpa_marker.h.
 *
 * Markers sit at every 512th octet of the direction's stream counted from
 * |base|, the first octet after the MPA Request/Reply (RFC 5044 §5,
 * docs/interop-notes.md §6.3); a marker where an FPDU would start leads that
 * FPDU.
 * FPDUPTR must be the distance from the FPDU's first octet to the marker;
 * when the FPDU starts with a marker, that distance minus 4 is accepted too
 * (docs/interop-notes.md §11). Markers count in the CRC.
 *
 * The library's deframer (mpa/mpa_rx.h) runs on the same octets in
 * lockstep as a cross-check: each FPDU says whether mpa_rx reached the
 * same verdict (FPDU_DONE, or the same CRC/marker error at the same
 * place); after an mpa_rx error it is restarted at the next FPDU.
 */
#ifndef IWARP_DECODE_FPDU_H
#define IWARP_DECODE_FPDU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mpa/mpa_rx.h"

/* One complete FPDU, valid during the callback only. */
struct dec_fpdu {
	uint64_t off;	 /* stream offset of its first octet */
	size_t wire_len; /* octets on the wire, markers included */
	uint16_t ulpdu_len;
	const uint8_t *ulpdu; /* the ULPDU, markers removed */
	uint32_t crc_field;   /* the CRC field as sent (stored little-endian) */
	uint32_t crc_calc;    /* CRC-32C over the FPDU minus the CRC field */
	unsigned markers;     /* markers inside the FPDU */
	bool marker_bad;      /* a marker was wrong: see marker_text */
	char marker_text[160];
	bool lib_agrees;    /* mpa_rx reached the same verdict */
	char lib_text[160]; /* if not: what mpa_rx said */
};

/* Receives complete FPDUs. */
typedef void (*dec_fpdu_fn)(void *ctx, const struct dec_fpdu *f);

/* FPDU framing state of one direction. */
struct dec_fpdu_rx {
	bool markers;
	uint64_t base; /* stream offset of marker position 0 */
	uint64_t pos;  /* stream offset of the next octet */
	bool in_fpdu;  /* an FPDU has started */
	uint64_t fpdu_off;
	bool lead_marker; /* the current FPDU starts with a marker */
	uint8_t *wire;	  /* the FPDU as on the wire */
	size_t wire_len;
	uint8_t *content; /* the FPDU without markers */
	size_t content_len;
	size_t need; /* content octets of this FPDU, 0 = unknown */
	unsigned nmarkers;
	bool marker_bad;
	char marker_text[160];
	bool crc_on; /* CRC negotiated (for the mpa_rx verdict) */
	/* the library deframer in lockstep */
	struct mpa_rx lib;
	bool lib_ok;	   /* |lib| initialised */
	int lib_err;	   /* its error in the current FPDU, 0 if none */
	unsigned lib_done; /* FPDU_DONE events in the current FPDU */
	uint16_t lib_len;  /* ULPDU_Length it reported */
};

/*
 * Starts framing at stream offset |base| (the first octet after the MPA
 * Request/Reply), with or without markers; |crc| tells the cross-checking
 * mpa_rx whether CRC is in use. Returns 0 or -ENOMEM.
 */
int dec_fpdu_rx_init(struct dec_fpdu_rx *rx, uint64_t base, bool markers,
		     bool crc);

/* Frees the buffers of |rx|. */
void dec_fpdu_rx_release(struct dec_fpdu_rx *rx);

/*
 * Feeds |len| in-order stream octets that start at rx->pos; calls
 * |fn|(|ctx|, fpdu) for every FPDU completed.
 */
void dec_fpdu_rx_feed(struct dec_fpdu_rx *rx, const uint8_t *data, size_t len,
		      dec_fpdu_fn fn, void *ctx);

/*
 * True when an FPDU is incomplete: it starts at |*off|, |*have| content
 * octets are there of |*need| (0 when even ULPDU_Length is incomplete).
 * A lone leading marker does not count.
 */
bool dec_fpdu_rx_partial(const struct dec_fpdu_rx *rx, uint64_t *off,
			 size_t *have, size_t *need);

#endif /* IWARP_DECODE_FPDU_H */
