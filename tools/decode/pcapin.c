/*
 * tools/decode/pcapin.c: pcap/pcapng input (see pcapin.h).
 */
#include "config.h"

#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "net.h"
#include "pcapin.h"

int dec_pcap_read(const char *path, struct dec_decoder *d, char *err,
		  size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *ph;
	const u_char *pkt;
	uint64_t frame = 0;
	bool warned_frag = false, warned_trunc = false;
	pcap_t *p;
	int dlt, rc;

	ebuf[0] = '\0';
	p = pcap_open_offline(path, ebuf);
	if (!p) {
		snprintf(err, errlen, "%s", ebuf);
		return -1;
	}
	dlt = pcap_datalink(p);
	if (!dec_net_link_supported(dlt)) {
		snprintf(err, errlen, "unsupported link type %d (%s)", dlt,
			 pcap_datalink_val_to_name(dlt)
				 ? pcap_datalink_val_to_name(dlt)
				 : "unknown");
		pcap_close(p);
		return -1;
	}
	while ((rc = pcap_next_ex(p, &ph, &pkt)) == 1) {
		struct dec_seg seg;
		char msg[128];

		frame++;
		memset(&seg, 0, sizeof(seg));
		seg.frame = frame;
		seg.ts = (double)ph->ts.tv_sec + (double)ph->ts.tv_usec / 1e6;
		switch (dec_net_parse(dlt, pkt, ph->caplen, ph->len, &seg)) {
		case DEC_NET_TCP:
			dec_decoder_feed(d, &seg);
			break;
		case DEC_NET_FRAGMENT:
			if (!warned_frag) {
				warned_frag = true;
				dec_decoder_note(d, DEC_WARNING, "ip-fragment",
						 frame,
						 "IP fragments are not "
						 "reassembled (first one)");
			}
			break;
		case DEC_NET_TRUNCATED:
		case DEC_NET_MALFORMED:
			if (!warned_trunc) {
				warned_trunc = true;
				snprintf(msg, sizeof(msg),
					 "frame with cut or malformed IP/TCP "
					 "headers skipped (first one)");
				dec_decoder_note(d, DEC_WARNING, "frame", frame,
						 msg);
			}
			break;
		case DEC_NET_NOT_TCP:
		case DEC_NET_UNSUPPORTED_LINK:
		default:
			break;
		}
	}
	if (rc == -1) {
		snprintf(err, errlen, "%s: %s", path, pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	pcap_close(p);
	return 0;
}
