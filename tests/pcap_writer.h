/*
 * tests/pcap_writer.h: writes classic pcap files of synthetic TCP/IPv4
 * connections (Ethernet framing), so captures of byte streams built by our
 * encoders can be decoded by tshark and iwarp_decode.
 *
 * A connection starts with the three-way handshake; every pcapw_send() is
 * one TCP segment (payload <= 65000 octets) with correct sequence and
 * acknowledgement numbers and IPv4 header checksum; pcapw_close() adds
 * FIN/ACK in both directions.
 */
#ifndef IWARP_TESTS_PCAP_WRITER_H
#define IWARP_TESTS_PCAP_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pcapw {
	FILE *f;
	uint32_t ts_usec; /* synthetic clock, +10 µs per packet */
};

struct pcapw_conn {
	struct pcapw *w;
	uint32_t ip[2]; /* [0] client, [1] server, host order */
	uint16_t port[2];
	uint32_t seq[2]; /* next sequence number of each side */
	uint16_t ip_id;
};

/* Opens |path| and writes the pcap header (linktype Ethernet). 0 or -errno. */
int pcapw_open(struct pcapw *w, const char *path);
int pcapw_finish(struct pcapw *w);

/* Starts a connection 127.0.0.1:|cport| -> 127.0.0.2:|sport| (handshake
 * written). */
int pcapw_connect(struct pcapw *w, struct pcapw_conn *c, uint16_t cport,
		  uint16_t sport);

/* One segment from side |from| (0 client, 1 server). */
int pcapw_send(struct pcapw_conn *c, int from, const uint8_t *data, size_t len);

/* FIN from both sides. */
int pcapw_close(struct pcapw_conn *c);

#endif
