/*
 * tools/decode/net.h: link-layer, IPv4/IPv6 and TCP header parsing for
 * iwarp_decode.
 *
 * dec_net_parse() takes one captured frame and its libpcap link type and
 * finds the TCP segment in it. Checksums are not verified (captures on
 * loopback or with offload carry unfinished checksums). IP fragments are
 * not reassembled: they are reported as such.
 */
#ifndef IWARP_DECODE_NET_H
#define IWARP_DECODE_NET_H

#include <stddef.h>
#include <stdint.h>

#include "decoder.h"

/* Result of dec_net_parse(). */
enum dec_net_result {
	DEC_NET_TCP = 0,	  /* |seg| filled */
	DEC_NET_NOT_TCP,	  /* not IP, or IP but not TCP: ignored */
	DEC_NET_FRAGMENT,	  /* an IP fragment: not reassembled */
	DEC_NET_TRUNCATED,	  /* headers cut by the snap length */
	DEC_NET_MALFORMED,	  /* header fields inconsistent */
	DEC_NET_UNSUPPORTED_LINK, /* link type not handled */
};

/*
 * Parses one frame |pkt| of |caplen| captured octets (|wirelen| on the wire)
 * with libpcap link type |dlt| (the DLT_* value pcap_datalink() returns).
 * On DEC_NET_TCP fills the endpoints, seq, flags and payload of |seg|;
 * seg->len is the captured payload, seg->wire_len the payload the IP header
 * announces (larger when the snap length cut the frame). |seg->payload|
 * points into |pkt|. Returns an enum dec_net_result.
 */
int dec_net_parse(int dlt, const uint8_t *pkt, size_t caplen, size_t wirelen,
		  struct dec_seg *seg);

/* True when dec_net_parse() knows link type |dlt|. */
int dec_net_link_supported(int dlt);

#endif /* IWARP_DECODE_NET_H */
