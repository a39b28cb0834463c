-- wireshark/iwarp.lua: libiwarp's Wireshark dissector for iWARP over TCP.
--
-- Decodes one TCP connection from its MPA Request/Reply (RFC 5044 §7.1,
-- revisions 1 and 2 with the RFC 6581 §9 enhanced private data: IRD, ORD,
-- the P2P flag and the RTR type bits) through the FPDU stream: MPA framing
-- with markers and CRC-32C (RFC 5044 §4-§6; FPDUs coalesced in one TCP
-- segment or split across several, reassembled with TCP desegmentation),
-- DDP (RFC 5041 §4), RDMAP (RFC 5040 §4) and the RFC 7306 extensions
-- (Immediate Data, Atomic Request, Atomic Response).
--
-- Use:  tshark -X lua_script:wireshark/iwarp.lua -r capture.pcap
-- or install it in Wireshark's Lua plugin folder (make install does).
--
-- The dissector is a TCP heuristic that recognises the MPA Request key and
-- then owns the TCP conversation (it sets itself as the conversation's
-- dissector), so every later segment of that connection comes here. It
-- claims the connection before Wireshark's own iwarp_mpa heuristic would,
-- so a frame is never decoded twice (docs/wireshark.md).
--
-- Fields live under libiwarp.mpa.*, libiwarp.ddp.*, libiwarp.rdmap.*;
-- problems are expert items in group "Malformed"/"Protocol".

local p_iwarp = Proto("libiwarp", "libiwarp iWARP (MPA/DDP/RDMAP)")
local p_mpa = Proto("libiwarp.mpa", "libiwarp MPA")
local p_ddp = Proto("libiwarp.ddp", "libiwarp DDP")
local p_rdmap = Proto("libiwarp.rdmap", "libiwarp RDMAP")

local bit = bit32 or bit

local MARKER_INTERVAL = 512 -- RFC 5044 §5
local KEY_REQ = "MPA ID Req Frame" -- RFC 5044 §7.1.1
local KEY_REP = "MPA ID Rep Frame"

---------------------------------------------------------------------------
-- Value strings
---------------------------------------------------------------------------
local rdmap_opcodes = {
	[0] = "RDMA Write",
	[1] = "RDMA Read Request",
	[2] = "RDMA Read Response",
	[3] = "Send",
	[4] = "Send with Invalidate",
	[5] = "Send with Solicited Event",
	[6] = "Send with Solicited Event and Invalidate",
	[7] = "Terminate",
	[8] = "Immediate Data",           -- RFC 7306 §5
	[9] = "Immediate Data with Solicited Event",
	[10] = "Atomic Request",
	[11] = "Atomic Response",
}

-- tagged (true) or the untagged QN each opcode must use (RFC 5040 §5,
-- RFC 7306 §5, §8)
local opcode_qn = {
	[0] = "tagged", [1] = 1, [2] = "tagged", [3] = 0, [4] = 0, [5] = 0,
	[6] = 0, [7] = 2, [8] = 0, [9] = 0, [10] = 3, [11] = 4,
}

local atomic_ops = { -- RFC 7306 §5.2.1
	[0] = "Fetch and Add",
	[1] = "Swap",
	[2] = "Compare and Swap",
}

local term_layers = { [0] = "RDMAP", [1] = "DDP", [2] = "LLP (MPA)" }

local rdmap_etypes = {
	[0] = "Local Catastrophic", [1] = "Remote Protection",
	[2] = "Remote Operation",
}
local ddp_etypes = {
	[0] = "Local Catastrophic", [1] = "Tagged Buffer",
	[2] = "Untagged Buffer", [3] = "Reserved for the LLP",
}
local rdmap_ecodes = {
	[0x00] = "Invalid STag", [0x01] = "Base or bounds violation",
	[0x02] = "Access rights violation",
	[0x03] = "STag not associated with RDMAP Stream",
	[0x04] = "TO wrap", [0x05] = "Invalid RDMAP version",
	[0x06] = "Unexpected OpCode",
	[0x07] = "Catastrophic error, localized to RDMAP Stream",
	[0x08] = "Catastrophic error, global",
	[0x09] = "STag cannot be Invalidated",
	[0xff] = "General Local Error",
}
local ddp_t_ecodes = {
	[0x00] = "Invalid STag", [0x01] = "Base or bounds violation",
	[0x02] = "STag not associated with DDP Stream", [0x03] = "TO wrap",
	[0x04] = "Invalid DDP version",
}
local ddp_u_ecodes = {
	[0x01] = "Invalid QN", [0x02] = "Invalid MSN - no buffer available",
	[0x03] = "Invalid MSN - MSN range is not valid",
	[0x04] = "Invalid MO", [0x05] = "DDP Message too long",
	[0x06] = "Invalid DDP version",
}
local llp_ecodes = {
	[0x01] = "TCP connection closed, stream lost",
	[0x02] = "MPA CRC error", [0x03] = "MPA Marker and ULPDU Length mismatch",
	[0x04] = "Invalid MPA Request or Reply",
	[0x05] = "Local catastrophic error",   -- RFC 6581 §9.3
	[0x06] = "Insufficient IRD resources",
	[0x07] = "No matching RTR option",
}

---------------------------------------------------------------------------
-- Fields
---------------------------------------------------------------------------
local F = {}
-- MPA Request / Reply (RFC 5044 §7.1; RFC 6581 §9.1)
F.rr_type = ProtoField.uint8("libiwarp.mpa.rr", "MPA frame", base.DEC,
	{ [1] = "Request", [2] = "Reply" })
F.key = ProtoField.string("libiwarp.mpa.key", "Key")
F.flag_m = ProtoField.bool("libiwarp.mpa.flag.m", "Markers (M)", 8, nil, 0x80)
F.flag_c = ProtoField.bool("libiwarp.mpa.flag.c", "CRC (C)", 8, nil, 0x40)
F.flag_r = ProtoField.bool("libiwarp.mpa.flag.r", "Reject (R)", 8, nil, 0x20)
F.flag_e = ProtoField.bool("libiwarp.mpa.flag.enhanced", "Enhanced (RFC 6581)", 8, nil, 0x10)
F.res = ProtoField.uint8("libiwarp.mpa.res", "Reserved", base.HEX, nil, 0x0e)
-- the low Res bit: libiwarp's offer of the RFC 7306 RDMAP extensions
-- (docs/wireshark.md); not an RFC 5044 field, so no warning
F.rdmap_ext = ProtoField.bool("libiwarp.mpa.rdmap_ext", "RFC 7306 extensions (libiwarp)", 8, nil, 0x01)
F.rev = ProtoField.uint8("libiwarp.mpa.rev", "Revision", base.DEC)
F.pd_len = ProtoField.uint16("libiwarp.mpa.pd_length", "Private data length", base.DEC)
F.pd = ProtoField.bytes("libiwarp.mpa.private_data", "Private data")
F.p2p = ProtoField.bool("libiwarp.mpa.p2p", "Peer-to-peer (A)", 16, nil, 0x8000)
F.rtr_send = ProtoField.bool("libiwarp.mpa.rtr.send", "Zero-length Send RTR (B)", 16, nil, 0x4000)
F.ird = ProtoField.uint16("libiwarp.mpa.ird", "IRD", base.DEC, nil, 0x3fff)
F.rtr_write = ProtoField.bool("libiwarp.mpa.rtr.write", "Zero-length Write RTR (C)", 16, nil, 0x8000)
F.rtr_read = ProtoField.bool("libiwarp.mpa.rtr.read", "Zero-length Read RTR (D)", 16, nil, 0x4000)
F.ord = ProtoField.uint16("libiwarp.mpa.ord", "ORD", base.DEC, nil, 0x3fff)
-- FPDU (RFC 5044 §4, §5, §6)
F.fpdu = ProtoField.bytes("libiwarp.mpa.fpdu", "FPDU")
F.ulpdu_len = ProtoField.uint16("libiwarp.mpa.ulpdu_length", "ULPDU length", base.DEC)
F.pad = ProtoField.bytes("libiwarp.mpa.pad", "Pad")
F.crc = ProtoField.uint32("libiwarp.mpa.crc", "CRC-32C", base.HEX)
F.crc_good = ProtoField.bool("libiwarp.mpa.crc.good", "CRC good")
F.crc_calc = ProtoField.uint32("libiwarp.mpa.crc.computed", "CRC-32C computed", base.HEX)
F.markers = ProtoField.uint16("libiwarp.mpa.markers", "Markers in FPDU", base.DEC)
F.marker = ProtoField.bytes("libiwarp.mpa.marker", "Marker")
F.marker_res = ProtoField.uint16("libiwarp.mpa.marker.res", "Reserved", base.HEX)
F.marker_ptr = ProtoField.uint16("libiwarp.mpa.marker.fpduptr", "FPDUPTR", base.DEC)
F.stream_pos = ProtoField.uint32("libiwarp.mpa.stream_pos", "FPDU stream position", base.DEC)
-- DDP (RFC 5041 §4)
F.ddp_t = ProtoField.bool("libiwarp.ddp.t", "Tagged (T)", 8, nil, 0x80)
F.ddp_l = ProtoField.bool("libiwarp.ddp.l", "Last (L)", 8, nil, 0x40)
F.ddp_rsvd = ProtoField.uint8("libiwarp.ddp.rsvd", "Reserved", base.HEX, nil, 0x3c)
F.ddp_dv = ProtoField.uint8("libiwarp.ddp.dv", "DDP version", base.DEC, nil, 0x03)
F.ddp_stag = ProtoField.uint32("libiwarp.ddp.stag", "STag", base.HEX)
F.ddp_to = ProtoField.uint64("libiwarp.ddp.to", "Tagged offset", base.HEX)
F.ddp_rsvdulp = ProtoField.uint32("libiwarp.ddp.rsvd_ulp", "Reserved for the ULP", base.HEX)
F.ddp_qn = ProtoField.uint32("libiwarp.ddp.qn", "Queue number", base.DEC)
F.ddp_msn = ProtoField.uint32("libiwarp.ddp.msn", "Message sequence number", base.DEC)
F.ddp_mo = ProtoField.uint32("libiwarp.ddp.mo", "Message offset", base.DEC)
F.ddp_len = ProtoField.uint32("libiwarp.ddp.payload_length", "Payload length", base.DEC)
-- RDMAP (RFC 5040 §4; RFC 7306 §5)
F.rv = ProtoField.uint8("libiwarp.rdmap.rv", "RDMAP version", base.DEC, nil, 0xc0)
F.rrsvd = ProtoField.uint8("libiwarp.rdmap.rsvd", "Reserved", base.HEX, nil, 0x30)
F.opcode = ProtoField.uint8("libiwarp.rdmap.opcode", "OpCode", base.DEC, rdmap_opcodes, 0x0f)
F.inv_stag = ProtoField.uint32("libiwarp.rdmap.inv_stag", "Invalidate STag", base.HEX)
F.sink_stag = ProtoField.uint32("libiwarp.rdmap.read.sink_stag", "Data Sink STag", base.HEX)
F.sink_to = ProtoField.uint64("libiwarp.rdmap.read.sink_to", "Data Sink Tagged Offset", base.HEX)
F.read_size = ProtoField.uint32("libiwarp.rdmap.read.size", "RDMA Read Message Size", base.DEC)
F.src_stag = ProtoField.uint32("libiwarp.rdmap.read.src_stag", "Data Source STag", base.HEX)
F.src_to = ProtoField.uint64("libiwarp.rdmap.read.src_to", "Data Source Tagged Offset", base.HEX)
F.t_layer = ProtoField.uint8("libiwarp.rdmap.term.layer", "Layer", base.DEC, term_layers, 0xf0)
F.t_etype = ProtoField.uint8("libiwarp.rdmap.term.etype", "Error type", base.DEC, nil, 0x0f)
F.t_ecode = ProtoField.uint8("libiwarp.rdmap.term.ecode", "Error code", base.HEX)
F.t_cause = ProtoField.string("libiwarp.rdmap.term.cause", "Cause")
F.t_m = ProtoField.bool("libiwarp.rdmap.term.m", "DDP Segment Length valid (M)", 16, nil, 0x8000)
F.t_d = ProtoField.bool("libiwarp.rdmap.term.d", "DDP header included (D)", 16, nil, 0x4000)
F.t_r = ProtoField.bool("libiwarp.rdmap.term.r", "RDMAP header included (R)", 16, nil, 0x2000)
F.t_rsvd = ProtoField.uint16("libiwarp.rdmap.term.rsvd", "Reserved", base.HEX, nil, 0x1fff)
F.t_seglen = ProtoField.uint16("libiwarp.rdmap.term.ddp_seg_len", "DDP Segment Length", base.DEC)
F.t_ddphdr = ProtoField.bytes("libiwarp.rdmap.term.ddp_hdr", "Terminated DDP header")
F.t_rdmaphdr = ProtoField.bytes("libiwarp.rdmap.term.rdmap_hdr", "Terminated RDMAP header")
F.imm = ProtoField.uint64("libiwarp.rdmap.immediate", "Immediate Data", base.HEX)
F.a_rsvd = ProtoField.uint32("libiwarp.rdmap.atomic.rsvd", "Reserved", base.HEX, nil, 0xfffffff0)
F.a_op = ProtoField.uint32("libiwarp.rdmap.atomic.opcode", "Atomic operation", base.DEC, atomic_ops, 0x0000000f)
F.a_reqid = ProtoField.uint32("libiwarp.rdmap.atomic.req_id", "Request Identifier", base.HEX)
F.a_stag = ProtoField.uint32("libiwarp.rdmap.atomic.stag", "Remote STag", base.HEX)
F.a_to = ProtoField.uint64("libiwarp.rdmap.atomic.to", "Remote Tagged Offset", base.HEX)
F.a_swapadd = ProtoField.uint64("libiwarp.rdmap.atomic.swap_add", "Add or Swap Data", base.HEX)
F.a_swapaddm = ProtoField.uint64("libiwarp.rdmap.atomic.swap_add_mask", "Add or Swap Mask", base.HEX)
F.a_cmp = ProtoField.uint64("libiwarp.rdmap.atomic.compare", "Compare Data", base.HEX)
F.a_cmpm = ProtoField.uint64("libiwarp.rdmap.atomic.compare_mask", "Compare Mask", base.HEX)
F.a_origid = ProtoField.uint32("libiwarp.rdmap.atomic.orig_req_id", "Original Request Identifier", base.HEX)
F.a_origval = ProtoField.uint64("libiwarp.rdmap.atomic.orig_value", "Original Remote Data Value", base.HEX)
F.data = ProtoField.bytes("libiwarp.rdmap.data", "Data")

local mpa_fields = { F.rr_type, F.key, F.flag_m, F.flag_c, F.flag_r, F.flag_e,
	F.res, F.rdmap_ext, F.rev, F.pd_len, F.pd, F.p2p, F.rtr_send, F.ird, F.rtr_write,
	F.rtr_read, F.ord, F.fpdu, F.ulpdu_len, F.pad, F.crc, F.crc_good,
	F.crc_calc, F.markers, F.marker, F.marker_res, F.marker_ptr, F.stream_pos }
local ddp_fields = { F.ddp_t, F.ddp_l, F.ddp_rsvd, F.ddp_dv, F.ddp_stag,
	F.ddp_to, F.ddp_rsvdulp, F.ddp_qn, F.ddp_msn, F.ddp_mo, F.ddp_len }
local rdmap_fields = { F.rv, F.rrsvd, F.opcode, F.inv_stag, F.sink_stag,
	F.sink_to, F.read_size, F.src_stag, F.src_to, F.t_layer, F.t_etype,
	F.t_ecode, F.t_cause, F.t_m, F.t_d, F.t_r, F.t_rsvd, F.t_seglen,
	F.t_ddphdr, F.t_rdmaphdr, F.imm, F.a_rsvd, F.a_op, F.a_reqid, F.a_stag,
	F.a_to, F.a_swapadd, F.a_swapaddm, F.a_cmp, F.a_cmpm, F.a_origid,
	F.a_origval, F.data }
p_mpa.fields = mpa_fields
p_ddp.fields = ddp_fields
p_rdmap.fields = rdmap_fields

-- Expert items
local E = {
	bad_crc = ProtoExpert.new("libiwarp.expert.bad_crc", "MPA CRC error (RFC 5044 §6)",
		expert.group.CHECKSUM, expert.severity.ERROR),
	crc_nonzero = ProtoExpert.new("libiwarp.expert.crc_not_zero",
		"CRC field not zero although CRC is off (RFC 5044 §4.1)",
		expert.group.PROTOCOL, expert.severity.WARN),
	bad_marker = ProtoExpert.new("libiwarp.expert.bad_marker",
		"MPA marker does not point at the FPDU (RFC 5044 §5)",
		expert.group.MALFORMED, expert.severity.ERROR),
	bad_rr = ProtoExpert.new("libiwarp.expert.bad_rr",
		"Invalid MPA Request/Reply (RFC 5044 §7.1)",
		expert.group.MALFORMED, expert.severity.ERROR),
	rr_note = ProtoExpert.new("libiwarp.expert.rr_note",
		"MPA negotiation", expert.group.SEQUENCE, expert.severity.CHAT),
	reject = ProtoExpert.new("libiwarp.expert.reject",
		"MPA Reply rejects the connection", expert.group.SEQUENCE,
		expert.severity.NOTE),
	ddp_version = ProtoExpert.new("libiwarp.expert.ddp_version",
		"DDP version is not 1 (RFC 5041 §4.2)", expert.group.PROTOCOL,
		expert.severity.ERROR),
	rdmap_version = ProtoExpert.new("libiwarp.expert.rdmap_version",
		"RDMAP version is not 1 (RFC 5040 §4.2)", expert.group.PROTOCOL,
		expert.severity.ERROR),
	unknown_opcode = ProtoExpert.new("libiwarp.expert.unknown_opcode",
		"Reserved RDMAP opcode (RFC 5040 §4.2, RFC 7306 §5)",
		expert.group.PROTOCOL, expert.severity.ERROR),
	wrong_qn = ProtoExpert.new("libiwarp.expert.wrong_qn",
		"Opcode on the wrong DDP queue or buffer model (RFC 5040 §5, RFC 7306 §8)",
		expert.group.PROTOCOL, expert.severity.ERROR),
	length = ProtoExpert.new("libiwarp.expert.length",
		"Length mismatch", expert.group.MALFORMED, expert.severity.ERROR),
	reserved = ProtoExpert.new("libiwarp.expert.reserved",
		"Reserved bits not zero", expert.group.PROTOCOL, expert.severity.WARN),
	msn = ProtoExpert.new("libiwarp.expert.msn",
		"Unexpected MSN or MO (RFC 5041 §5.3)", expert.group.SEQUENCE,
		expert.severity.WARN),
	to = ProtoExpert.new("libiwarp.expert.to",
		"Tagged offset does not continue the message (RFC 5041 §5.2)",
		expert.group.SEQUENCE, expert.severity.WARN),
	atomic_pair = ProtoExpert.new("libiwarp.expert.atomic_unpaired",
		"Atomic Response without a matching Atomic Request (RFC 7306 §5.2.2)",
		expert.group.SEQUENCE, expert.severity.WARN),
	siw_term = ProtoExpert.new("libiwarp.expert.siw_terminate",
		"Terminate control word in siw's nibble-swapped layout (RFC 5040 §4.8 differs)",
		expert.group.PROTOCOL, expert.severity.WARN),
	term_cause = ProtoExpert.new("libiwarp.expert.term_cause",
		"Terminate cause the RFCs do not define (RFC 5040 §7)",
		expert.group.PROTOCOL, expert.severity.WARN),
	terminate = ProtoExpert.new("libiwarp.expert.terminate",
		"Terminate", expert.group.RESPONSE_CODE, expert.severity.NOTE),
}
p_iwarp.experts = { E.bad_crc, E.crc_nonzero, E.bad_marker, E.bad_rr,
	E.rr_note, E.reject, E.ddp_version, E.rdmap_version, E.unknown_opcode,
	E.wrong_qn, E.length, E.reserved, E.msn, E.to, E.atomic_pair,
	E.siw_term, E.term_cause, E.terminate }

---------------------------------------------------------------------------
-- CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), RFC 5044 §6
---------------------------------------------------------------------------
local crc_table = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if bit.band(c, 1) ~= 0 then
			c = bit.bxor(bit.rshift(c, 1), 0x82F63B78)
		else
			c = bit.rshift(c, 1)
		end
	end
	crc_table[i] = c
end

-- Continues a running (un-finalised) CRC over the string s.
local function crc_update(crc, s)
	local band, bxor, rshift, byte = bit.band, bit.bxor, bit.rshift, string.byte
	for i = 1, #s do
		crc = bxor(crc_table[band(bxor(crc, byte(s, i)), 0xff)], rshift(crc, 8))
	end
	return crc
end

---------------------------------------------------------------------------
-- Per-connection state
---------------------------------------------------------------------------
local f_seq = Field.new("tcp.seq")
local f_len = Field.new("tcp.len")
local f_stream = Field.new("tcp.stream")

local conns = {} -- by tcp.stream
local info_frame = nil -- frame whose Info column we last reset

local function last(f)
	local all = { f() }
	local v = all[#all]
	return v and v.value or nil
end

local function init()
	conns = {}
	info_frame = nil
end
p_iwarp.init = init

-- One direction of a connection: 0 = initiator (sent the Request), 1 = responder.
local function new_dir()
	return {
		rr_seq = nil,      -- sequence number of the MPA frame
		base = nil,        -- sequence number of the first FPDU octet
		markers = false,   -- markers in this direction
		pending = nil,     -- stream position a desegmented PDU starts at
		reasm = {},        -- frame number -> stream position of a reassembled tvb
		msn = {},          -- QN -> next expected MSN (first pass)
		mo = {},           -- QN -> next expected MO within the message
		to_next = nil,     -- tagged: {stag, to} continuing the message
		notes = {},        -- stream position -> list of {expert, text}
		done = {},         -- stream positions already checked (first pass)
		atomics = {},      -- outstanding atomic request ids sent this way
	}
end

local function seq_diff(a, b)
	return (a - b) % 4294967296
end

---------------------------------------------------------------------------
-- MPA Request / Reply
---------------------------------------------------------------------------
local function dissect_rr(tvb, off, pinfo, tree, c, d)
	local avail = tvb:len() - off
	if avail < 20 then
		return -(20 - avail)
	end
	local pdlen = tvb(off + 18, 2):uint()
	if pdlen > 512 then -- RFC 5044 §7.1: private data is at most 512 octets
		local t = tree:add(p_mpa, tvb(off), "MPA Request/Reply")
		t:add_proto_expert_info(E.bad_rr, "private data length " .. pdlen .. " > 512")
		return tvb:len() - off
	end
	if avail < 20 + pdlen then
		return -(20 + pdlen - avail)
	end
	local key = tvb(off, 16):string()
	local kind = (d == c.d[0]) and 1 or 2
	if key ~= (kind == 1 and KEY_REQ or KEY_REP) then
		local t = tree:add(p_mpa, tvb(off), "MPA Request/Reply")
		t:add_proto_expert_info(E.bad_rr, "expected the MPA "
			.. (kind == 1 and "Request" or "Reply") .. " key (RFC 5044 §7.1.1)")
		return tvb:len() - off
	end
	local t = tree:add(p_mpa, tvb(off, 20 + pdlen),
		kind == 1 and "MPA Request" or "MPA Reply")
	t:add(F.rr_type, kind):set_generated()
	t:add(F.key, tvb(off, 16))
	local flags = tvb(off + 16, 1)
	t:add(F.flag_m, flags)
	t:add(F.flag_c, flags)
	t:add(F.flag_r, flags)
	t:add(F.flag_e, flags)
	t:add(F.res, flags)
	t:add(F.rdmap_ext, flags)
	t:add(F.rev, tvb(off + 17, 1))
	t:add(F.pd_len, tvb(off + 18, 2))
	local fl = flags:uint()
	local rev = tvb(off + 17, 1):uint()
	if bit.band(fl, 0x0e) ~= 0 then
		t:add_proto_expert_info(E.reserved, "MPA Res bits not zero")
	end
	if kind == 1 and bit.band(fl, 0x20) ~= 0 then
		t:add_proto_expert_info(E.bad_rr, "R (reject) set in a Request")
	end
	if rev > 2 then
		t:add_proto_expert_info(E.bad_rr, "unknown MPA revision " .. rev)
	end
	local pdoff = off + 20
	if pdlen > 0 then
		local enhanced = bit.band(fl, 0x10) ~= 0 and rev == 2
		if enhanced then
			if pdlen < 4 then
				t:add_proto_expert_info(E.bad_rr,
					"enhanced mode without IRD/ORD (RFC 6581 §9.1)")
			else
				local irdw = tvb(pdoff, 2)
				local ordw = tvb(pdoff + 2, 2)
				local e = t:add(p_mpa, tvb(pdoff, 4), "Enhanced RDMA connection establishment (RFC 6581)")
				e:add(F.p2p, irdw)
				e:add(F.rtr_send, irdw)
				e:add(F.ird, irdw)
				e:add(F.rtr_write, ordw)
				e:add(F.rtr_read, ordw)
				e:add(F.ord, ordw)
				pdoff = pdoff + 4
			end
		end
		if off + 20 + pdlen > pdoff then
			t:add(F.pd, tvb(pdoff, off + 20 + pdlen - pdoff))
		end
	elseif bit.band(fl, 0x10) ~= 0 and rev == 2 then
		t:add_proto_expert_info(E.bad_rr, "enhanced mode without IRD/ORD (RFC 6581 §9.1)")
	end
	if kind == 2 and bit.band(fl, 0x20) ~= 0 then
		t:add_proto_expert_info(E.reject)
	end
	-- negotiation state (first pass): markers toward the side that asked,
	-- CRC when either asked (RFC 5044 §7.1.2)
	if not pinfo.visited then
		if kind == 1 then
			c.req_m = bit.band(fl, 0x80) ~= 0
			c.req_c = bit.band(fl, 0x40) ~= 0
		else
			c.rep_m = bit.band(fl, 0x80) ~= 0
			c.rep_c = bit.band(fl, 0x40) ~= 0
			c.crc = c.req_c or c.rep_c
			c.d[0].markers = c.rep_m -- initiator -> responder
			c.d[1].markers = c.req_m
			c.rejected = bit.band(fl, 0x20) ~= 0
		end
	end
	local info = kind == 1 and "MPA Request" or "MPA Reply"
	info = info .. string.format(" rev %d%s%s%s", rev,
		bit.band(fl, 0x80) ~= 0 and " M" or "",
		bit.band(fl, 0x40) ~= 0 and " C" or "",
		bit.band(fl, 0x20) ~= 0 and " R" or "")
	pinfo.cols.info:append(info .. "; ")
	return 20 + pdlen
end

---------------------------------------------------------------------------
-- FPDU framing with markers (RFC 5044 §4.1, §5)
---------------------------------------------------------------------------

-- Walks an FPDU starting at stream position pos, tvb offset off. Returns
-- the wire length (or a negative number of missing octets), the list of
-- content pieces {tvb_off, len} and the list of marker tvb offsets.
local function frame_fpdu(tvb, off, pos, markers)
	local avail = tvb:len() - off
	local lead = (markers and pos % MARKER_INTERVAL == 0) and 4 or 0
	if avail < lead + 2 then
		return -(lead + 2 - avail)
	end
	local ulen = tvb(off + lead, 2):uint()
	local pad = (4 - (2 + ulen) % 4) % 4
	local content = 2 + ulen + pad + 4
	local pieces, mks = {}, {}
	local o, p, left = off, pos, content
	while left > 0 do
		if markers and p % MARKER_INTERVAL == 0 then
			mks[#mks + 1] = o
			o = o + 4
			p = p + 4
		else
			local n = math.min(left, MARKER_INTERVAL - p % MARKER_INTERVAL)
			if not markers then
				n = left
			end
			pieces[#pieces + 1] = { o, n }
			o = o + n
			p = p + n
			left = left - n
		end
	end
	local wire = o - off
	if wire > avail then
		return -(wire - avail)
	end
	return wire, pieces, mks, ulen, pad
end

---------------------------------------------------------------------------
-- DDP / RDMAP
---------------------------------------------------------------------------
local function note(d, pos, e, text)
	local l = d.notes[pos]
	if not l then
		l = {}
		d.notes[pos] = l
	end
	l[#l + 1] = { e, text }
end

-- Sequence checks run once, on the first pass, in stream order.
local function check_seq(c, dir, pos, tagged, last, opcode, stag, to, qn, msn, mo, plen, reqid)
	local d = c.d[dir]
	if d.done[pos] then
		return
	end
	d.done[pos] = true
	if tagged then
		local n = d.to_next
		if n and (n.stag ~= stag or n.to ~= to) then
			note(d, pos, E.to, string.format("expected STag 0x%08x TO 0x%s",
				n.stag, n.to:tohex()))
		end
		d.to_next = (not last) and { stag = stag, to = to + plen } or nil
	elseif qn then
		local want = d.msn[qn] or 1
		local wmo = d.mo[qn] or 0
		if msn ~= want then
			note(d, pos, E.msn, string.format("QN %d: MSN %d, expected %d", qn, msn, want))
		end
		if mo ~= wmo then
			note(d, pos, E.msn, string.format("QN %d: MO %d, expected %d", qn, mo, wmo))
		end
		if last then
			d.msn[qn] = (msn + 1) % 4294967296
			d.mo[qn] = 0
		else
			d.msn[qn] = msn
			d.mo[qn] = mo + plen
		end
	end
	if opcode == 10 and reqid then
		d.atomics[reqid] = true
	elseif opcode == 11 and reqid then
		local o = c.d[1 - dir].atomics
		if not o[reqid] then
			note(d, pos, E.atomic_pair, string.format(
				"no Atomic Request 0x%08x was sent the other way", reqid))
		end
		o[reqid] = nil
	end
end

local function term_ecode_name(layer, etype, ecode)
	if layer == 0 then
		return (rdmap_etypes[etype] or "?") .. ": " ..
			(etype == 0 and "" or (rdmap_ecodes[ecode] or "?"))
	elseif layer == 1 then
		local names = etype == 1 and ddp_t_ecodes or (etype == 2 and ddp_u_ecodes or {})
		return (ddp_etypes[etype] or "?") .. ": " .. (names[ecode] or "?")
	elseif layer == 2 then
		return "MPA: " .. (llp_ecodes[ecode] or "?")
	end
	return "?"
end

-- Causes RFC 5040 §7.2 / RFC 5041 §7.2 / RFC 5044 §8 and RFC 6581 §9.3 define.
local rdmap_prot = { [0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1,
	[0x04] = 1, [0x09] = 1, [0xff] = 1 }
local rdmap_op = { [0x05] = 1, [0x06] = 1, [0x07] = 1, [0x08] = 1, [0xff] = 1 }
local function term_cause_ok(layer, etype, ecode)
	if layer == 0 then
		return (etype == 0 and ecode == 0) or (etype == 1 and rdmap_prot[ecode] ~= nil)
			or (etype == 2 and rdmap_op[ecode] ~= nil)
	elseif layer == 1 then
		return (etype == 0 and ecode == 0) or (etype == 1 and ddp_t_ecodes[ecode] ~= nil)
			or (etype == 2 and ddp_u_ecodes[ecode] ~= nil)
	elseif layer == 2 then
		return etype == 0 and llp_ecodes[ecode] ~= nil
	end
	return false
end

-- The Terminate control word read per the RFC (RFC 5040 §4.8) or in
-- Linux siw's layout (a little-endian bitfield: layer and etype nibbles
-- swapped in octet 0, M/D/R in the low bits of octet 2).
local function term_ctrl(b0, b1, b2, b3, siw)
	if not siw then
		return { layer = bit.rshift(b0, 4), etype = bit.band(b0, 15), ecode = b1,
			m = bit.band(b2, 0x80) ~= 0, d = bit.band(b2, 0x40) ~= 0,
			r = bit.band(b2, 0x20) ~= 0,
			rsvd = bit.bor(bit.lshift(bit.band(b2, 0x1f), 8), b3) }
	end
	return { layer = bit.band(b0, 15), etype = bit.rshift(b0, 4), ecode = b1,
		m = bit.band(b2, 1) ~= 0, d = bit.band(b2, 2) ~= 0, r = bit.band(b2, 4) ~= 0,
		rsvd = bit.bor(bit.band(bit.rshift(b2, 3), 0x1f), bit.lshift(b3, 5)) }
end

-- Whether the Terminate's length fits its D and R bits.
local function term_len_ok(t, u, p, n)
	local need = 4
	if t.d then
		if n < p + 4 + 2 + 1 then
			return false
		end
		need = need + 2 + (bit.band(u(p + 6, 1):uint(), 0x80) ~= 0 and 14 or 18)
	end
	if t.r then
		need = need + 28
	end
	return n - p == need
end

local function dissect_ulpdu(u, pinfo, tree, c, dir, pos)
	local n = u:len()
	if n < 2 then
		tree:add_proto_expert_info(E.length, "ULPDU shorter than a DDP header")
		return
	end
	local ctl = u(0, 1):uint()
	local tagged = bit.band(ctl, 0x80) ~= 0
	local last = bit.band(ctl, 0x40) ~= 0
	local hlen = tagged and 14 or 18
	local dt = tree:add(p_ddp, u(0, math.min(hlen, n)))
	dt:add(F.ddp_t, u(0, 1))
	dt:add(F.ddp_l, u(0, 1))
	dt:add(F.ddp_rsvd, u(0, 1))
	dt:add(F.ddp_dv, u(0, 1))
	if bit.band(ctl, 0x03) ~= 1 then
		dt:add_proto_expert_info(E.ddp_version, "DDP version " .. bit.band(ctl, 3))
	end
	if bit.band(ctl, 0x3c) ~= 0 then
		dt:add_proto_expert_info(E.reserved, "DDP reserved bits not zero")
	end
	local rt = tree:add(p_rdmap, u(1, 1))
	local r = u(1, 1):uint()
	local opcode = bit.band(r, 0x0f)
	rt:add(F.rv, u(1, 1))
	rt:add(F.rrsvd, u(1, 1))
	rt:add(F.opcode, u(1, 1))
	if bit.band(r, 0xc0) ~= 0x40 then
		rt:add_proto_expert_info(E.rdmap_version, "RDMAP version " .. bit.rshift(r, 6))
	end
	if bit.band(r, 0x30) ~= 0 then
		rt:add_proto_expert_info(E.reserved, "RDMAP reserved bits not zero")
	end
	local name = rdmap_opcodes[opcode]
	if not name then
		rt:add_proto_expert_info(E.unknown_opcode, "opcode " .. opcode)
		name = "Reserved opcode " .. opcode
	end
	if n < hlen then
		dt:add_proto_expert_info(E.length, "ULPDU of " .. n .. " octets is shorter than the "
			.. hlen .. "-octet DDP header")
		pinfo.cols.info:append(name .. " (truncated); ")
		return
	end
	local stag, to, qn, msn, mo
	if tagged then
		stag = u(2, 4):uint()
		to = u(6, 8):uint64()
		dt:add(F.ddp_stag, u(2, 4))
		dt:add(F.ddp_to, u(6, 8))
	else
		qn = u(6, 4):uint()
		msn = u(10, 4):uint()
		mo = u(14, 4):uint()
		if opcode == 4 or opcode == 6 then
			rt:add(F.inv_stag, u(2, 4))
		else
			dt:add(F.ddp_rsvdulp, u(2, 4))
		end
		dt:add(F.ddp_qn, u(6, 4))
		dt:add(F.ddp_msn, u(10, 4))
		dt:add(F.ddp_mo, u(14, 4))
	end
	local plen = n - hlen
	dt:add(F.ddp_len, plen):set_generated()
	local want = opcode_qn[opcode]
	if want ~= nil then
		if want == "tagged" and not tagged then
			rt:add_proto_expert_info(E.wrong_qn, name .. " must be tagged")
		elseif want ~= "tagged" and (tagged or qn ~= want) then
			rt:add_proto_expert_info(E.wrong_qn, string.format("%s must be untagged on QN %d",
				name, want))
		end
	end
	local p = hlen
	local reqid
	local info = name
	if opcode == 1 and not tagged then -- RFC 5040 §4.4
		if plen ~= 28 then
			rt:add_proto_expert_info(E.length, "Read Request header is 28 octets, not " .. plen)
		else
			rt:add(F.sink_stag, u(p, 4))
			rt:add(F.sink_to, u(p + 4, 8))
			rt:add(F.read_size, u(p + 12, 4))
			rt:add(F.src_stag, u(p + 16, 4))
			rt:add(F.src_to, u(p + 20, 8))
			info = info .. string.format(" %u octets", u(p + 12, 4):uint())
			p = p + 28
		end
	elseif opcode == 7 and not tagged then -- RFC 5040 §4.8
		if plen < 4 then
			rt:add_proto_expert_info(E.length, "Terminate without its control word")
		else
			local b = { u(p, 1):uint(), u(p + 1, 1):uint(), u(p + 2, 1):uint(),
				u(p + 3, 1):uint() }
			local t = term_ctrl(b[1], b[2], b[3], b[4], false)
			local siw = false
			if not (term_len_ok(t, u, p, n) and term_cause_ok(t.layer, t.etype, t.ecode)) then
				local sw = term_ctrl(b[1], b[2], b[3], b[4], true)
				if term_len_ok(sw, u, p, n) and term_cause_ok(sw.layer, sw.etype, sw.ecode)
					and sw.rsvd == 0 then
					t, siw = sw, true
				end
			end
			local layer, etype, ecode = t.layer, t.etype, t.ecode
			local tt = rt:add(p_rdmap, u(p, plen), "Terminate")
			if siw then
				tt:add(F.t_layer, u(p, 1), layer * 16):append_text(" (siw layout)")
				tt:add(F.t_etype, u(p, 1), etype)
				tt:add_proto_expert_info(E.siw_term)
			else
				tt:add(F.t_layer, u(p, 1))
				tt:add(F.t_etype, u(p, 1))
			end
			tt:add(F.t_ecode, u(p + 1, 1))
			local cause = term_ecode_name(layer, etype, ecode)
			tt:add(F.t_cause, cause):set_generated()
			if not siw and not term_cause_ok(layer, etype, ecode) then
				tt:add_proto_expert_info(E.term_cause, string.format(
					"layer %d etype %d ecode 0x%02x", layer, etype, ecode))
			end
			if siw then
				tt:add(F.t_m, u(p + 2, 2), t.m and 0x8000 or 0)
				tt:add(F.t_d, u(p + 2, 2), t.d and 0x4000 or 0)
				tt:add(F.t_r, u(p + 2, 2), t.r and 0x2000 or 0)
			else
				tt:add(F.t_m, u(p + 2, 2))
				tt:add(F.t_d, u(p + 2, 2))
				tt:add(F.t_r, u(p + 2, 2))
				tt:add(F.t_rsvd, u(p + 2, 2))
			end
			local hdrct = (t.m and 0x8000 or 0) + (t.d and 0x4000 or 0) + (t.r and 0x2000 or 0)
			tt:add_proto_expert_info(E.terminate, "Terminate: " .. (term_layers[layer] or "?")
				.. " " .. cause)
			info = info .. " (" .. cause .. ")"
			p = p + 4
			if bit.band(hdrct, 0x4000) ~= 0 then
				if n - p < 2 + 14 then
					tt:add_proto_expert_info(E.length, "D set but no DDP header follows")
				else
					tt:add(F.t_seglen, u(p, 2))
					local th = bit.band(u(p + 2, 1):uint(), 0x80) ~= 0 and 14 or 18
					if n - p - 2 < th then
						tt:add_proto_expert_info(E.length, "Terminated DDP header truncated")
						p = n
					else
						tt:add(F.t_ddphdr, u(p + 2, th))
						p = p + 2 + th
					end
				end
			end
			if bit.band(hdrct, 0x2000) ~= 0 then
				if n - p < 28 then
					tt:add_proto_expert_info(E.length, "R set but no RDMAP header follows")
				else
					tt:add(F.t_rdmaphdr, u(p, 28))
					p = p + 28
				end
			end
		end
	elseif (opcode == 8 or opcode == 9) and not tagged then -- RFC 7306 §5.1
		if plen ~= 8 then
			rt:add_proto_expert_info(E.length, "Immediate Data carries 8 octets, not " .. plen)
		else
			rt:add(F.imm, u(p, 8))
			info = info .. " 0x" .. u(p, 8):uint64():tohex()
			p = p + 8
		end
	elseif opcode == 10 and not tagged then -- RFC 7306 §5.2.1
		if plen ~= 52 then
			rt:add_proto_expert_info(E.length, "Atomic Request is 52 octets, not " .. plen)
		else
			local aop = bit.band(u(p, 4):uint(), 0x0f)
			rt:add(F.a_rsvd, u(p, 4))
			rt:add(F.a_op, u(p, 4))
			if not atomic_ops[aop] then
				rt:add_proto_expert_info(E.unknown_opcode, "atomic operation " .. aop
					.. " (RFC 7306 §5.2.1)")
			end
			if bit.band(u(p, 4):uint(), 0xfffffff0) ~= 0 then
				rt:add_proto_expert_info(E.reserved, "Atomic Request reserved bits not zero")
			end
			reqid = u(p + 4, 4):uint()
			rt:add(F.a_reqid, u(p + 4, 4))
			rt:add(F.a_stag, u(p + 8, 4))
			rt:add(F.a_to, u(p + 12, 8))
			rt:add(F.a_swapadd, u(p + 20, 8))
			rt:add(F.a_swapaddm, u(p + 28, 8))
			rt:add(F.a_cmp, u(p + 36, 8))
			rt:add(F.a_cmpm, u(p + 44, 8))
			info = info .. string.format(" %s id 0x%08x", atomic_ops[aop] or "?", reqid)
			p = p + 52
		end
	elseif opcode == 11 and not tagged then -- RFC 7306 §5.2.2
		if plen ~= 12 then
			rt:add_proto_expert_info(E.length, "Atomic Response is 12 octets, not " .. plen)
		else
			reqid = u(p, 4):uint()
			rt:add(F.a_origid, u(p, 4))
			rt:add(F.a_origval, u(p + 4, 8))
			info = info .. string.format(" id 0x%08x", reqid)
			p = p + 12
		end
	end
	if p < n then
		rt:add(F.data, u(p, n - p))
	end
	if not pinfo.visited then
		check_seq(c, dir, pos, tagged, last, opcode, stag, to, qn, msn, mo, plen, reqid)
	end
	local l = c.d[dir].notes[pos]
	if l then
		for _, e in ipairs(l) do
			dt:add_proto_expert_info(e[1], e[2])
		end
	end
	pinfo.cols.info:append(info .. (last and "" or " (more)") .. "; ")
end

local function dissect_fpdu(tvb, off, pinfo, tree, c, dir, pos)
	local d = c.d[dir]
	local wire, pieces, mks, ulen, pad = frame_fpdu(tvb, off, pos, d.markers)
	if wire < 0 then
		return wire
	end
	local ft = tree:add(p_mpa, tvb(off, wire), "MPA FPDU")
	ft:add(F.stream_pos, pos):set_generated()
	-- markers: reserved 0, FPDUPTR back to the FPDU (RFC 5044 §5)
	if #mks > 0 then
		ft:add(F.markers, #mks):set_generated()
	end
	local lead = (#mks > 0 and mks[1] == off)
	for _, mo in ipairs(mks) do
		local mt = ft:add(F.marker, tvb(mo, 4))
		mt:add(F.marker_res, tvb(mo, 2))
		mt:add(F.marker_ptr, tvb(mo + 2, 2))
		local ptr = tvb(mo + 2, 2):uint()
		local want = mo - off
		local ok = ptr == want or (lead and ptr == want - 4 and mo ~= off)
		if tvb(mo, 2):uint() ~= 0 then
			mt:add_proto_expert_info(E.reserved, "marker reserved field not zero")
		end
		if not ok then
			mt:add_proto_expert_info(E.bad_marker, string.format(
				"FPDUPTR %d, FPDU starts %d octets before the marker", ptr, want))
		end
	end
	-- content without markers
	local ba = ByteArray.new()
	for _, pc in ipairs(pieces) do
		ba:append(tvb(pc[1], pc[2]):bytes())
	end
	local ct = ba:tvb("De-markered FPDU")
	local clen = ct:len()
	ft:add(F.ulpdu_len, tvb(pieces[1][1], 2))
	if pad > 0 then
		ft:add(F.pad, ct(2 + ulen, pad))
	end
	-- CRC over every wire octet before the CRC field, markers included
	local crc_off = off + wire - 4
	local crcv = tvb(crc_off, 4):le_uint()
	local ci = ft:add_le(F.crc, tvb(crc_off, 4))
	if c.crc then
		local calc = bit.bnot(crc_update(0xffffffff, tvb(off, wire - 4):raw()))
		calc = calc % 4294967296
		ft:add(F.crc_calc, calc):set_generated()
		local good = calc == crcv
		ft:add(F.crc_good, good):set_generated()
		if good then
			ci:append_text(" [correct]")
		else
			ci:append_text(string.format(" [incorrect, should be 0x%08x]", calc))
			ci:add_proto_expert_info(E.bad_crc, string.format(
				"CRC 0x%08x, computed 0x%08x", crcv, calc))
		end
	elseif crcv ~= 0 then
		ci:add_proto_expert_info(E.crc_nonzero)
	end
	ft:append_text(string.format(", ULPDU %d octets", ulen))
	dissect_ulpdu(ct(2, ulen), pinfo, tree, c, dir, pos)
	return wire
end

---------------------------------------------------------------------------
-- Main dissector: one TCP payload (or reassembled PDU)
---------------------------------------------------------------------------
local function dissect(tvb, pinfo, tree)
	local stream = last(f_stream)
	local c = stream and conns[stream]
	if not c then
		return 0
	end
	local seq, tlen = last(f_seq), last(f_len)
	if not seq then
		return 0
	end
	local dir = (tostring(pinfo.src) == c.ini_addr and pinfo.src_port == c.ini_port) and 0 or 1
	local d = c.d[dir]
	-- sequence number of this tvb's first octet: a segment's tvb ends
	-- where the segment ends; a reassembled one starts where we asked
	-- for more data
	local start
	local reassembled = tvb:offset() == 0
	if reassembled then
		start = d.reasm[pinfo.number]
		if not start and not pinfo.visited and d.pending then
			start = d.pending
			d.reasm[pinfo.number] = start
			d.pending = nil
		end
		if not start then
			return 0
		end
	else
		start = (seq + tlen - tvb:len()) % 4294967296
	end
	pinfo.cols.protocol = "iWARP"
	pinfo.cols.info:clear_fence()
	if info_frame ~= pinfo.number then
		-- our summary replaces TCP's (several calls append to it)
		info_frame = pinfo.number
		pinfo.cols.info:set(string.format("%d → %d ", pinfo.src_port, pinfo.dst_port))
	end
	if not pinfo.visited and not reassembled then
		d.pending = nil
	end
	local root = tree:add(p_iwarp, tvb())
	local off = 0
	local len = tvb:len()
	while off < len do
		local s = (start + off) % 4294967296
		local used
		if d.base == nil or seq_diff(s, d.base) >= 2147483648 then
			-- before the FPDU stream: the MPA Request/Reply (RFC 5044 §7.1)
			if d.rr_seq ~= nil and s ~= d.rr_seq then
				return off
			end
			used = dissect_rr(tvb, off, pinfo, root, c, d)
			if used > 0 and not pinfo.visited then
				d.rr_seq = s
				d.base = (s + used) % 4294967296
			end
		elseif c.rejected or c.rep_m == nil then
			-- data after a rejecting Reply, or before the Reply: not FPDUs
			root:add_proto_expert_info(E.bad_rr, "data outside full operation")
			return len
		else
			local pos = seq_diff(s, d.base)
			used = dissect_fpdu(tvb, off, pinfo, root, c, dir, pos)
		end
		if used < 0 then
			pinfo.desegment_offset = off
			pinfo.desegment_len = -used
			if not pinfo.visited then
				d.pending = s
			end
			return len
		end
		off = off + used
	end
	pinfo.cols.info:fence()
	return len
end

function p_iwarp.dissector(tvb, pinfo, tree)
	return dissect(tvb, pinfo, tree)
end

-- Heuristic: an MPA Request key at the start of a TCP payload makes the
-- connection ours (RFC 5044 §7.1.1).
local function heur(tvb, pinfo, tree)
	if tvb:len() < 20 or tvb:offset() == 0 then
		return false
	end
	if tvb(0, 16):string() ~= KEY_REQ then
		return false
	end
	local stream = last(f_stream)
	if stream == nil then
		return false
	end
	local c = conns[stream]
	if not c then
		c = {
			ini_addr = tostring(pinfo.src), ini_port = pinfo.src_port,
			d = { [0] = new_dir(), [1] = new_dir() },
			crc = false,
		}
		conns[stream] = c
	end
	pinfo.conversation = p_iwarp
	dissect(tvb, pinfo, tree)
	return true
end

p_iwarp:register_heuristic("tcp", heur)
DissectorTable.get("tcp.port"):add_for_decode_as(p_iwarp)
