/*
 * tools/decode/output.h: iwarp_decode's text and JSON output.
 *
 * Text: one line per unit ("conn 1 A->B off 20: MPA Request ..."), each
 * finding as it is found ("conn 1 A->B off 44: error [crc]: ..."), then a
 * summary per connection and a verdict line. -q drops the unit lines.
 * JSON: one object {"file", "units": [...], "connections": [...],
 * "errors": [...], "warnings": [...], "result": {...}}; units are
 * streamed, findings buffered until the end.
 */
#ifndef IWARP_DECODE_OUTPUT_H
#define IWARP_DECODE_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "decoder.h"

/* Output state; fields are private to output.c. */
struct dec_out {
	FILE *fp;
	bool json;
	bool quiet;
	const char *file;
	unsigned nunits;
	unsigned nconn, niwarp;
	char **findings; /* JSON: pre-rendered finding objects */
	bool *finding_is_error;
	size_t nfind, capfind;
	char *conns; /* JSON: rendered connection objects */
	size_t conns_len, conns_cap;
};

/* Starts output for capture |file| on |fp|. */
void dec_out_init(struct dec_out *o, FILE *fp, const char *file, bool json,
		  bool quiet);

/* A sink that writes to |o|. */
struct dec_sink dec_out_sink(struct dec_out *o);

/*
 * Ends the output with the totals (|errors|, |warnings| from the decoder)
 * and frees what |o| holds.
 */
void dec_out_finish(struct dec_out *o, unsigned errors, unsigned warnings);

#endif /* IWARP_DECODE_OUTPUT_H */
