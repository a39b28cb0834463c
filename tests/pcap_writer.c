/* tests/pcap_writer.c: synthetic TCP/IPv4 pcap writer (see pcap_writer.h). */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "pcap_writer.h"
#include "util/bytes.h"

#define PCAP_MAGIC	  0xa1b2c3d4u
#define LINKTYPE_ETHERNET 1
#define ETH_LEN		  14
#define IP_LEN		  20
#define TCP_LEN		  20
#define TCP_FIN		  0x01
#define TCP_SYN		  0x02
#define TCP_PSH		  0x08
#define TCP_ACK		  0x10

static void put_u32le_f(FILE *f, uint32_t v)
{
	uint8_t b[4];

	iw_put_u32le(b, v);
	fwrite(b, 1, 4, f);
}

static void put_u16le_f(FILE *f, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	fwrite(b, 1, 2, f);
}

int pcapw_open(struct pcapw *w, const char *path)
{
	w->f = fopen(path, "wb");
	if (!w->f)
		return -errno;
	w->ts_usec = 0;
	put_u32le_f(w->f, PCAP_MAGIC);
	put_u16le_f(w->f, 2);
	put_u16le_f(w->f, 4);
	put_u32le_f(w->f, 0);	   /* thiszone */
	put_u32le_f(w->f, 0);	   /* sigfigs */
	put_u32le_f(w->f, 262144); /* snaplen */
	put_u32le_f(w->f, LINKTYPE_ETHERNET);
	return 0;
}

int pcapw_finish(struct pcapw *w)
{
	int rc = fclose(w->f) == 0 ? 0 : -errno;

	w->f = NULL;
	return rc;
}

static uint16_t ip_checksum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += iw_get_u16be(p + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static int write_segment(struct pcapw_conn *c, int from, uint8_t flags,
			 const uint8_t *data, size_t len)
{
	static uint8_t frame[ETH_LEN + IP_LEN + TCP_LEN + 65535];
	int to = !from;
	uint8_t *p = frame;
	size_t total = ETH_LEN + IP_LEN + TCP_LEN + len;
	uint32_t ack = (flags & TCP_ACK) ? c->seq[to] : 0;

	if (len > 65000)
		return -EMSGSIZE;
	/* Ethernet: dst, src, IPv4 */
	memset(p, 0, 12);
	p[5] = (uint8_t)(to + 1);
	p[11] = (uint8_t)(from + 1);
	p = iw_put_u16be(p + 12, 0x0800);
	/* IPv4 */
	p[0] = 0x45;
	p[1] = 0;
	iw_put_u16be(p + 2, (uint16_t)(IP_LEN + TCP_LEN + len));
	iw_put_u16be(p + 4, c->ip_id++);
	iw_put_u16be(p + 6, 0x4000); /* DF */
	p[8] = 64;
	p[9] = 6;
	iw_put_u16be(p + 10, 0);
	iw_put_u32be(p + 12, c->ip[from]);
	iw_put_u32be(p + 16, c->ip[to]);
	iw_put_u16be(p + 10, ip_checksum(p, IP_LEN));
	p += IP_LEN;
	/* TCP (checksum left 0: tshark does not verify it by default) */
	iw_put_u16be(p, c->port[from]);
	iw_put_u16be(p + 2, c->port[to]);
	iw_put_u32be(p + 4, c->seq[from]);
	iw_put_u32be(p + 8, ack);
	p[12] = 0x50;
	p[13] = flags;
	iw_put_u16be(p + 14, 65535);
	iw_put_u16be(p + 16, 0);
	iw_put_u16be(p + 18, 0);
	p += TCP_LEN;
	if (len)
		memcpy(p, data, len);

	c->w->ts_usec += 10;
	put_u32le_f(c->w->f, 1700000000u + c->w->ts_usec / 1000000u);
	put_u32le_f(c->w->f, c->w->ts_usec % 1000000u);
	put_u32le_f(c->w->f, (uint32_t)total);
	put_u32le_f(c->w->f, (uint32_t)total);
	if (fwrite(frame, 1, total, c->w->f) != total)
		return -EIO;
	c->seq[from] +=
		(uint32_t)len + ((flags & (TCP_SYN | TCP_FIN)) ? 1u : 0u);
	return 0;
}

int pcapw_connect(struct pcapw *w, struct pcapw_conn *c, uint16_t cport,
		  uint16_t sport)
{
	int rc;

	c->w = w;
	c->ip[0] = 0x7f000001u;
	c->ip[1] = 0x7f000002u;
	c->port[0] = cport;
	c->port[1] = sport;
	c->seq[0] = 1000u + cport;
	c->seq[1] = 500000u + sport;
	c->ip_id = 1;
	rc = write_segment(c, 0, TCP_SYN, NULL, 0);
	if (!rc)
		rc = write_segment(c, 1, TCP_SYN | TCP_ACK, NULL, 0);
	if (!rc)
		rc = write_segment(c, 0, TCP_ACK, NULL, 0);
	return rc;
}

int pcapw_send(struct pcapw_conn *c, int from, const uint8_t *data, size_t len)
{
	return write_segment(c, from, TCP_PSH | TCP_ACK, data, len);
}

int pcapw_close(struct pcapw_conn *c)
{
	int rc = write_segment(c, 0, TCP_FIN | TCP_ACK, NULL, 0);

	if (!rc)
		rc = write_segment(c, 1, TCP_FIN | TCP_ACK, NULL, 0);
	if (!rc)
		rc = write_segment(c, 0, TCP_ACK, NULL, 0);
	return rc;
}
