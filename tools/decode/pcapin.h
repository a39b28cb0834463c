/*
 * tools/decode/pcapin.h: reads a pcap or pcapng file with libpcap
 * (pcap_open_offline handles both) and feeds its TCP segments to a
 * decoder.
 */
#ifndef IWARP_DECODE_PCAPIN_H
#define IWARP_DECODE_PCAPIN_H

#include <stddef.h>

#include "decoder.h"

/*
 * Reads every frame of |path| into |d| (frames that are not TCP are
 * skipped; IP fragments and cut headers become warnings).
 * Returns 0, or -1 with a message in |err| (|errlen| octets) when the file
 * cannot be opened or read or its link type is not supported.
 */
int dec_pcap_read(const char *path, struct dec_decoder *d, char *err,
		  size_t errlen);

#endif /* IWARP_DECODE_PCAPIN_H */
