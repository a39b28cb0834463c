/*
 * tools/decode/net.c: link layer -> IPv4/IPv6 -> TCP (see net.h).
 */
#include "config.h"

#include <pcap/pcap.h>
#include <string.h>

#include "net.h"
#include "util/bytes.h"

#define ETHERTYPE_IPV4	   0x0800
#define ETHERTYPE_IPV6	   0x86DD
#define ETHERTYPE_VLAN	   0x8100
#define ETHERTYPE_QINQ	   0x88A8
#define ETHERTYPE_QINQ_OLD 0x9100

#define IPPROTO_TCP_NUM 6

/* IPv6 extension headers we skip (RFC 8200 §4). */
#define IP6_HOPOPTS  0
#define IP6_ROUTING  43
#define IP6_FRAGMENT 44
#define IP6_DSTOPTS  60

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif

static int parse_tcp(const uint8_t *p, size_t caplen, size_t wirelen,
		     struct dec_seg *seg)
{
	size_t doff;

	if (caplen < 20)
		return DEC_NET_TRUNCATED;
	doff = (size_t)(p[12] >> 4) * 4;
	if (doff < 20 || doff > wirelen)
		return DEC_NET_MALFORMED;
	if (doff > caplen)
		return DEC_NET_TRUNCATED;
	seg->src.port = iw_get_u16be(p);
	seg->dst.port = iw_get_u16be(p + 2);
	seg->seq = iw_get_u32be(p + 4);
	seg->flags = p[13];
	seg->payload = p + doff;
	seg->wire_len = wirelen - doff;
	seg->len = caplen - doff;
	if (seg->len > seg->wire_len)
		seg->len = seg->wire_len; /* Ethernet padding after the IP
					     packet */
	return DEC_NET_TCP;
}

static int parse_ipv4(const uint8_t *p, size_t caplen, size_t wirelen,
		      struct dec_seg *seg)
{
	size_t ihl, total;
	uint16_t frag;

	if (caplen < 20)
		return DEC_NET_TRUNCATED;
	if ((p[0] >> 4) != 4)
		return DEC_NET_MALFORMED;
	ihl = (size_t)(p[0] & 0x0f) * 4;
	total = iw_get_u16be(p + 2);
	/* TSO captures may carry total length 0: trust the frame then. */
	if (total == 0)
		total = wirelen;
	if (ihl < 20 || total < ihl || total > wirelen)
		return DEC_NET_MALFORMED;
	if (ihl > caplen)
		return DEC_NET_TRUNCATED;
	if (p[9] != IPPROTO_TCP_NUM)
		return DEC_NET_NOT_TCP;
	frag = iw_get_u16be(p + 6);
	if (frag & 0x3fff) /* MF or a fragment offset */
		return DEC_NET_FRAGMENT;
	memset(&seg->src, 0, sizeof(seg->src));
	memset(&seg->dst, 0, sizeof(seg->dst));
	seg->src.family = 4;
	seg->dst.family = 4;
	memcpy(seg->src.addr, p + 12, 4);
	memcpy(seg->dst.addr, p + 16, 4);
	if (caplen > total)
		caplen = total;
	return parse_tcp(p + ihl, caplen - ihl, total - ihl, seg);
}

static int parse_ipv6(const uint8_t *p, size_t caplen, size_t wirelen,
		      struct dec_seg *seg)
{
	size_t off = 40, total;
	uint8_t nh;

	if (caplen < 40)
		return DEC_NET_TRUNCATED;
	if ((p[0] >> 4) != 6)
		return DEC_NET_MALFORMED;
	total = 40 + (size_t)iw_get_u16be(p + 4);
	if (total == 40) /* jumbogram or TSO: trust the frame */
		total = wirelen;
	if (total > wirelen)
		return DEC_NET_MALFORMED;
	nh = p[6];
	for (;;) {
		if (nh == IPPROTO_TCP_NUM)
			break;
		if (nh == IP6_FRAGMENT)
			return DEC_NET_FRAGMENT;
		if (nh != IP6_HOPOPTS && nh != IP6_ROUTING && nh != IP6_DSTOPTS)
			return DEC_NET_NOT_TCP;
		if (off + 8 > caplen)
			return DEC_NET_TRUNCATED;
		nh = p[off];
		off += 8 + (size_t)p[off + 1] * 8;
		if (off > total)
			return DEC_NET_MALFORMED;
	}
	if (off > caplen)
		return DEC_NET_TRUNCATED;
	memset(&seg->src, 0, sizeof(seg->src));
	memset(&seg->dst, 0, sizeof(seg->dst));
	seg->src.family = 6;
	seg->dst.family = 6;
	memcpy(seg->src.addr, p + 8, 16);
	memcpy(seg->dst.addr, p + 24, 16);
	if (caplen > total)
		caplen = total;
	return parse_tcp(p + off, caplen - off, total - off, seg);
}

/* Dispatches on an Ethernet-style protocol number (EtherType). */
static int parse_ethertype(uint16_t type, const uint8_t *p, size_t caplen,
			   size_t wirelen, struct dec_seg *seg)
{
	switch (type) {
	case ETHERTYPE_IPV4:
		return parse_ipv4(p, caplen, wirelen, seg);
	case ETHERTYPE_IPV6:
		return parse_ipv6(p, caplen, wirelen, seg);
	default:
		return DEC_NET_NOT_TCP;
	}
}

/* Raw IP: the version nibble tells v4 from v6. */
static int parse_raw(const uint8_t *p, size_t caplen, size_t wirelen,
		     struct dec_seg *seg)
{
	if (caplen < 1)
		return DEC_NET_TRUNCATED;
	if ((p[0] >> 4) == 4)
		return parse_ipv4(p, caplen, wirelen, seg);
	if ((p[0] >> 4) == 6)
		return parse_ipv6(p, caplen, wirelen, seg);
	return DEC_NET_NOT_TCP;
}

static int parse_ether(const uint8_t *p, size_t caplen, size_t wirelen,
		       struct dec_seg *seg)
{
	size_t off = 12;
	uint16_t type;

	for (;;) {
		if (off + 2 > caplen)
			return DEC_NET_TRUNCATED;
		type = iw_get_u16be(p + off);
		off += 2;
		if (type != ETHERTYPE_VLAN && type != ETHERTYPE_QINQ &&
		    type != ETHERTYPE_QINQ_OLD)
			break;
		off += 2; /* TCI */
	}
	if (off > caplen)
		return DEC_NET_TRUNCATED;
	return parse_ethertype(type, p + off, caplen - off, wirelen - off, seg);
}

/*
 * BSD loopback: a 4-octet address family in the capturing host's byte
 * order (DLT_NULL) or network order (DLT_LOOP). AF_INET is 2 everywhere;
 * AF_INET6 is 24, 28 or 30 depending on the BSD.
 */
static int parse_null(const uint8_t *p, size_t caplen, size_t wirelen,
		      struct dec_seg *seg)
{
	uint32_t fam_be, fam_le, fam;

	if (caplen < 4)
		return DEC_NET_TRUNCATED;
	fam_be = iw_get_u32be(p);
	fam_le = iw_get_u32le(p);
	fam = fam_be < fam_le ? fam_be : fam_le;
	p += 4;
	caplen -= 4;
	wirelen -= 4;
	if (fam == 2)
		return parse_ipv4(p, caplen, wirelen, seg);
	if (fam == 24 || fam == 28 || fam == 30)
		return parse_ipv6(p, caplen, wirelen, seg);
	return DEC_NET_NOT_TCP;
}

int dec_net_link_supported(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP:
		return 1;
	default:
		return 0;
	}
}

int dec_net_parse(int dlt, const uint8_t *pkt, size_t caplen, size_t wirelen,
		  struct dec_seg *seg)
{
	if (wirelen < caplen)
		wirelen = caplen;
	switch (dlt) {
	case DLT_EN10MB:
		return parse_ether(pkt, caplen, wirelen, seg);
	case DLT_LINUX_SLL: /* 16-octet header, protocol at 14 */
		if (caplen < 16)
			return DEC_NET_TRUNCATED;
		return parse_ethertype(iw_get_u16be(pkt + 14), pkt + 16,
				       caplen - 16, wirelen - 16, seg);
	case DLT_LINUX_SLL2: /* 20-octet header, protocol at 0 */
		if (caplen < 20)
			return DEC_NET_TRUNCATED;
		return parse_ethertype(iw_get_u16be(pkt), pkt + 20, caplen - 20,
				       wirelen - 20, seg);
	case DLT_RAW:
		return parse_raw(pkt, caplen, wirelen, seg);
	case DLT_IPV4:
		return parse_ipv4(pkt, caplen, wirelen, seg);
	case DLT_IPV6:
		return parse_ipv6(pkt, caplen, wirelen, seg);
	case DLT_NULL:
	case DLT_LOOP:
		return parse_null(pkt, caplen, wirelen, seg);
	default:
		return DEC_NET_UNSUPPORTED_LINK;
	}
}
