/*
 * rdmap/rdmap_opcode.h: the RDMAP opcode table (RFC 5040 §4.2-§4.8, RFC
 * 7306) and the check of a decoded DDP/RDMAP header against it.
 *
 * One const table indexed by the 4-bit RDMAP opcode gives, per opcode, its
 * name (as Wireshark names it), buffer model (tagged or untagged), untagged
 * queue number (RFC 5040 §5.1: QN 0 Send family, QN 1 Read Request, QN 2
 * Terminate), the length of the RDMAP header that follows the DDP header,
 * the Solicited Event / Invalidate semantics, and whether libiwarp
 * implements the opcode. Receive and transmit paths dispatch on this table.
 */
#ifndef IWARP_RDMAP_OPCODE_H
#define IWARP_RDMAP_OPCODE_H

#include <stdbool.h>
#include <stdint.h>

#include "ddp/ddp_hdr.h"

/* RDMAP opcodes (RFC 5040 §4.2; 0x8-0xB from RFC 7306; 0xC-0xF reserved). */
enum rdmap_opcode {
	RDMAP_OP_WRITE = 0x0,
	RDMAP_OP_READ_REQUEST = 0x1,
	RDMAP_OP_READ_RESPONSE = 0x2,
	RDMAP_OP_SEND = 0x3,
	RDMAP_OP_SEND_INV = 0x4,
	RDMAP_OP_SEND_SE = 0x5,
	RDMAP_OP_SEND_SE_INV = 0x6,
	RDMAP_OP_TERMINATE = 0x7,
	RDMAP_OP_IMM_DATA = 0x8,	/* RFC 7306 §5.1 */
	RDMAP_OP_IMM_DATA_SE = 0x9,	/* RFC 7306 §5.1 */
	RDMAP_OP_ATOMIC_REQUEST = 0xA,	/* RFC 7306 §5.1 */
	RDMAP_OP_ATOMIC_RESPONSE = 0xB, /* RFC 7306 §5.1 */
};

#define RDMAP_OPCODE_COUNT 16 /* the opcode is 4 bits (RFC 5040 §4.2) */

/* rdmap_opcode_info.qn for an opcode that uses the tagged buffer model. */
#define RDMAP_QN_NONE 0xFF

/* One entry of the opcode table. */
struct rdmap_opcode_info {
	const char *name; /* Wireshark's name, e.g. "Send with SE" */
	bool valid;	  /* defined by RFC 5040 and implemented here */
	bool tagged;	  /* DDP tagged buffer model (Write, Read Response) */
	uint8_t qn;	  /* untagged queue number, RDMAP_QN_NONE if tagged */
	uint8_t hdr_len;  /* RDMAP header octets after the DDP header */
	bool solicited;	  /* Send with Solicited Event (RFC 5040 §5.3) */
	bool invalidate;  /* carries an Invalidate STag (RFC 5040 §4.4) */
	bool ext;	  /* RFC 7306 extension: valid only when negotiated */
};

/*
 * The table, indexed by opcode 0..15. valid is false for 0x8-0xF; the RFC
 * 7306 entries (0x8-0xB) have ext set and are accepted only on a
 * connection that negotiated the extensions (rdmap_hdr_check_ext). Their
 * hdr_len is the fixed part the engine needs whole: the 8 octets of
 * Immediate Data, the 52-octet Atomic Request and the 12-octet Atomic
 * Response header (rdmap/rdmap_ext.h).
 */
extern const struct rdmap_opcode_info rdmap_opcode_table[RDMAP_OPCODE_COUNT];

/*
 * Table entry for |opcode| (only its low 4 bits are used). Never NULL.
 */
const struct rdmap_opcode_info *rdmap_opcode_get(uint8_t opcode);

/*
 * Name of |opcode| as Wireshark prints it ("Write", ..., "Terminate";
 * "Reserved" for 0xC-0xF). Never NULL.
 */
const char *rdmap_opcode_name(uint8_t opcode);

/*
 * Checks the RDMAP view of a decoded DDP header |h| (RFC 5040 §4.2, §5.1,
 * §7): the RDMAP version (§4.1), the opcode, the buffer model the opcode
 * requires and, for untagged opcodes, the queue number. The DDP version and
 * DDP reserved bits are DDP's business (RFC 5041 §7) and are not checked here;
 * reserved RDMAP bits are ignored on receive (RFC 5040 §4.2).
 *
 * Checks, in this order:
 *   RV != 1                                  -> IWARP_ERR_RDMAP_VERSION
 *                                               (RDMAP/RemoteOp/0x05)
 *   opcode reserved, RFC 7306 or unsupported -> IWARP_ERR_RDMAP_OPCODE
 *                                               (RDMAP/RemoteOp/0x06)
 *   T bit differs from the opcode's model    -> IWARP_ERR_RDMAP_OPCODE
 *       (e.g. a tagged Send or an untagged Write: the opcode is unexpected
 *       for the buffer model it arrived on, RFC 5040 §4.2 / §7)
 *   untagged and QN != the opcode's queue    -> IWARP_ERR_DDP_QN
 *       (DDP/untagged/0x01: e.g. a Send on QN 1 or a Read Request on QN 0;
 *       siw does the same for a Send with QN != 0, docs/interop-notes.md §1.4)
 * Returns 0 when the header is acceptable.
 */
int rdmap_hdr_check(const struct ddp_hdr *h);

/*
 * rdmap_hdr_check, but with |ext| the RFC 7306 opcodes 0x8-0xB are valid
 * too (Immediate Data on QN 0, Atomic Request on QN 3, Atomic Response on
 * QN 4, all untagged). rdmap_hdr_check(h) is rdmap_hdr_check_ext(h, false).
 */
int rdmap_hdr_check_ext(const struct ddp_hdr *h, bool ext);

/*
 * How many octets at the start of a ULPDU (DDP segment) of |ulpdu_len|
 * octets form the DDP+RDMAP header that a receiver must see before it can
 * place payload: the DDP header (14 tagged, RFC 5041 §4.3; 18 untagged,
 * §4.4) plus the RDMAP header of the opcode's table row (28 for a Read
 * Request, RFC 5040 §4.4; the opcode is the low nibble of octet 1). The
 * result is clamped to |ulpdu_len|. |first2| holds the first two octets
 * of the ULPDU and is not read when |ulpdu_len| < 2 (the result is then
 * |ulpdu_len|). The MPA deframer calls this through a callback.
 */
size_t rdmap_hdr_len(const uint8_t *first2, uint16_t ulpdu_len);

#endif /* IWARP_RDMAP_OPCODE_H */
