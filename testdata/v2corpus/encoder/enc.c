/*
 * enc: an independent RPC-over-RDMA version 2 encoder for rdmashark's v2
 * corpus. Every transport header is encoded by the XDR routines rpcgen
 * generated from draft-ietf-nfsv4-rpcrdma-version-two-07's own XDR
 * (rpcrdma_v2.x, four changes for it to compile, none altering the
 * encoding: see README.md); the RPC Call and Reply headers by libtirpc's
 * xdr_callmsg/xdr_replymsg, the NFSv3 arguments and results by libtirpc's
 * XDR primitives (RFC 1813). It writes, on standard output, the script
 * the wrapper (../main.go) turns into RoCEv2 frames:
 *
 *   'L' len(4) text          a label for the next record
 *   'M' dir(1) inv(4) len(4) bytes
 *                            a Send from 'c' (client) or 's' (server),
 *                            With Invalidate of inv when inv != 0
 *   'R' handle(4) offset(8) len(4) bytes
 *                            the server RDMA Reads the client's memory
 *   'W' handle(4) offset(8) len(4) bytes
 *                            the server RDMA Writes the client's memory
 *   'C' n(1)                 the records that follow go on connection n
 *                            of the base capture (0 until the first 'C')
 *
 * (integers big-endian). Usage: enc valid|forbidden
 */
#include <rpc/rpc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "rpcrdma_v2.h"

#define NFS_PROGRAM 100003
#define NFS_V3 3
#define NFSPROC3_NULL 0
#define NFSPROC3_READ 6
#define NFSPROC3_WRITE 7

static unsigned sent[2];     /* Sends per side: 0 client, 1 server */
static unsigned advertised[2] = {32, 32}; /* credits each side advertises */
static unsigned maxcredit[2];             /* the largest rdma_credit each side sent */

static void put32(unsigned v) { v = htonl(v); fwrite(&v, 4, 1, stdout); }
static void put64(unsigned long long v) { put32(v >> 32); put32((unsigned)v); }

static void label(const char *s) { putchar('L'); put32(strlen(s)); fwrite(s, 1, strlen(s), stdout); }

static void die(const char *what) { fprintf(stderr, "enc: %s failed\n", what); exit(1); }

/* Encoding buffers. */
static char hbuf[65536], rbuf[65536];
static XDR hx, rx;

static void hbegin(void) { xdrmem_create(&hx, hbuf, sizeof hbuf, XDR_ENCODE); }

/* prefix encodes rpcrdma2_hdr_prefix for a message of side s. */
static void prefix(int s, uint32 xid, uint32 htype)
{
	rpcrdma2_hdr_prefix p;
	p.rdma_start.rdma_xid = xid;
	p.rdma_start.rdma_vers = 2;
	/* draft-07 "Flow Control": the sent message count plus the credits advertised. */
	p.rdma_start.rdma_credit = sent[s] + advertised[s];
	if (p.rdma_start.rdma_credit > maxcredit[s])
		maxcredit[s] = p.rdma_start.rdma_credit;
	p.rdma_start.rdma_htype = htype;
	if (!xdr_rpcrdma2_hdr_prefix(&hx, &p))
		die("prefix");
}

/* post writes the header in hbuf, then rpc (rlen octets), as one Send. */
static void post(int s, uint32 inv, const char *rpc, unsigned rlen)
{
	unsigned hlen = xdr_getpos(&hx);
	putchar('M');
	putchar(s ? 's' : 'c');
	put32(inv);
	put32(hlen + rlen);
	fwrite(hbuf, 1, hlen, stdout);
	fwrite(rpc, 1, rlen, stdout);
	sent[s]++;
}

/* first_word is the rdma_rpc_first_word of a piece: its first 4 octets. */
static uint32 first_word(const char *rpc) { uint32 w; memcpy(&w, rpc, 4); return ntohl(w); }

static void rdma(char op, uint32 handle, unsigned long long off, const char *data, unsigned n)
{
	putchar(op);
	put32(handle);
	put64(off);
	put32(n);
	fwrite(data, 1, n, stdout);
}

/* RPC messages (RFC 5531) in rbuf. */
static void call_hdr(uint32 xid, uint32 proc)
{
	struct rpc_msg m;
	memset(&m, 0, sizeof m);
	xdrmem_create(&rx, rbuf, sizeof rbuf, XDR_ENCODE);
	m.rm_xid = xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = 2;
	m.rm_call.cb_prog = NFS_PROGRAM;
	m.rm_call.cb_vers = NFS_V3;
	m.rm_call.cb_proc = proc;
	m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	if (!xdr_callmsg(&rx, &m))
		die("xdr_callmsg");
}

static void reply_hdr(uint32 xid)
{
	struct rpc_msg m;
	memset(&m, 0, sizeof m);
	xdrmem_create(&rx, rbuf, sizeof rbuf, XDR_ENCODE);
	m.rm_xid = xid;
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = SUCCESS;
	m.acpted_rply.ar_results.where = NULL;
	m.acpted_rply.ar_results.proc = (xdrproc_t)xdr_void;
	if (!xdr_replymsg(&rx, &m))
		die("xdr_replymsg");
}

static void u32(uint32 v) { if (!xdr_u_int32_t(&rx, &v)) die("u32"); }
static void u64(uint64_t v) { if (!xdr_u_int64_t(&rx, &v)) die("u64"); }
static void fh(void)
{
	char h[32];
	char *p = h;
	unsigned n = sizeof h;
	memset(h, 0xfa, sizeof h);
	if (!xdr_bytes(&rx, &p, &n, 64)) die("nfs_fh3");
}
static char pattern[20000];
/* opaque data<> of n octets; reduced: the length only (the data moved by
 * a chunk: RFC 8166 section 3.4.5.2 / draft-07 "Reduced Payloads"). */
static void data(unsigned n, int reduced)
{
	if (reduced) { u32(n); return; }
	char *p = pattern;
	if (!xdr_bytes(&rx, &p, &n, sizeof pattern)) die("data");
}

/* NFSv3 WRITE3args (RFC 1813 3.3.7): file, offset, count, stable, data. */
static unsigned write_call(uint32 xid, unsigned n, int reduced)
{
	call_hdr(xid, NFSPROC3_WRITE);
	fh(); u64(0); u32(n); u32(2 /* FILE_SYNC */); data(n, reduced);
	return xdr_getpos(&rx);
}
/* WRITE3res: NFS3_OK, wcc_data (no attributes), count, committed, verf. */
static unsigned write_reply(uint32 xid, unsigned n)
{
	reply_hdr(xid);
	u32(0); u32(0); u32(0); u32(n); u32(2); u32(0x76657266); u32(0x76657266);
	return xdr_getpos(&rx);
}
/* READ3args: file, offset, count. */
static unsigned read_call(uint32 xid, unsigned n)
{
	call_hdr(xid, NFSPROC3_READ);
	fh(); u64(0); u32(n);
	return xdr_getpos(&rx);
}
/* READ3res: NFS3_OK, post_op_attr (none), count, eof, data. */
static unsigned read_reply(uint32 xid, unsigned n, int reduced)
{
	reply_hdr(xid);
	u32(0); u32(0); u32(n); u32(1); data(n, reduced);
	return xdr_getpos(&rx);
}
static unsigned null_call(uint32 xid) { call_hdr(xid, NFSPROC3_NULL); return xdr_getpos(&rx); }
static unsigned null_reply(uint32 xid) { reply_hdr(xid); return xdr_getpos(&rx); }

/* Transport headers. */
static rpcrdma2_propval pv[8];
static uint32 pvdata[8][4];
static int npv;
static void prop_u32(uint32 which, uint32 v)
{
	pvdata[npv][0] = htonl(v);
	pv[npv].rdma_which = which;
	pv[npv].rdma_data.rdma_data_len = 4;
	pv[npv].rdma_data.rdma_data_val = (char *)pvdata[npv];
	npv++;
}
static void prop_raw(uint32 which, const void *d, unsigned n)
{
	memcpy(pvdata[npv], d, n);
	pv[npv].rdma_which = which;
	pv[npv].rdma_data.rdma_data_len = n;
	pv[npv].rdma_data.rdma_data_val = (char *)pvdata[npv];
	npv++;
}
static void prop_hostauth(const char *msg)
{
	/* rdma_data holds an XDR opaque<>: encode it with the generated routine. */
	XDR x;
	rpcrdma2_prop_hostauth h;
	h.rpcrdma2_prop_hostauth_len = strlen(msg);
	h.rpcrdma2_prop_hostauth_val = (char *)msg;
	xdrmem_create(&x, (char *)pvdata[npv], sizeof pvdata[npv], XDR_ENCODE);
	if (!xdr_rpcrdma2_prop_hostauth(&x, &h)) die("hostauth");
	pv[npv].rdma_which = RDMA2_PROPID_HOSTAUTH;
	pv[npv].rdma_data.rdma_data_len = xdr_getpos(&x);
	pv[npv].rdma_data.rdma_data_val = (char *)pvdata[npv];
	npv++;
}
static void connprop(int s, uint32 htype)
{
	rpcrdma2_hdr_connprop c;
	hbegin();
	prefix(s, 0, htype);
	c.rdma_props.rpcrdma2_propset_len = npv;
	c.rdma_props.rpcrdma2_propset_val = pv;
	if (!xdr_rpcrdma2_hdr_connprop(&hx, &c)) die("connprop");
	npv = 0;
	post(s, 0, "", 0);
}
static void grant(int s)
{
	hbegin();
	prefix(s, 0, RDMA2_GRANT);
	post(s, 0, "", 0);
}

static rpcrdma2_segment segs[4];
static rpcrdma2_write_chunk wchunk(uint32 handle, uint32 len, uint64 off)
{
	static int i;
	rpcrdma2_write_chunk w;
	rpcrdma2_segment *sg = &segs[i++ % 4];
	sg->rdma_handle = handle; sg->rdma_length = len; sg->rdma_offset = off;
	w.rdma_target.rdma_target_len = 1;
	w.rdma_target.rdma_target_val = sg;
	return w;
}

/* call_inline sends a Call whose n octets are in rbuf. */
static void call_inline(uint32 xid, uint32 inv, rpcrdma2_read_list *reads, rpcrdma2_write_list *writes, rpcrdma2_write_chunk *reply, unsigned n)
{
	rpcrdma2_hdr_call_inline h;
	hbegin();
	prefix(0, xid, RDMA2_CALL_INLINE);
	h.rdma_inv_handle = inv;
	h.rdma_reads = reads;
	h.rdma_provisional_writes = writes;
	h.rdma_provisional_reply = reply;
	h.rdma_rpc_first_word = first_word(rbuf);
	if (!xdr_rpcrdma2_hdr_call_inline(&hx, &h)) die("call_inline");
	post(0, 0, rbuf + 4, n - 4);
}
static void reply_inline(uint32 xid, uint32 inv, rpcrdma2_write_list *writes, const char *rpc, unsigned n)
{
	rpcrdma2_hdr_reply_inline h;
	hbegin();
	prefix(1, xid, RDMA2_REPLY_INLINE);
	h.rdma_writes = writes;
	h.rdma_rpc_first_word = first_word(rpc);
	if (!xdr_rpcrdma2_hdr_reply_inline(&hx, &h)) die("reply_inline");
	post(1, inv, rpc + 4, n - 4);
}
/* middle sends a *_MIDDLE piece of n octets at rpc, rem octets after it. */
static void middle(int s, uint32 xid, uint32 htype, uint32 rem, const char *rpc, unsigned n)
{
	rpcrdma2_hdr_call_middle h; /* rpcrdma2_hdr_reply_middle is the same XDR */
	rpcrdma2_hdr_reply_middle r;
	hbegin();
	prefix(s, xid, htype);
	if (htype == RDMA2_CALL_MIDDLE) {
		h.rdma_remaining = rem;
		h.rdma_rpc_first_word = first_word(rpc);
		if (!xdr_rpcrdma2_hdr_call_middle(&hx, &h)) die("call_middle");
	} else {
		r.rdma_remaining = rem;
		r.rdma_rpc_first_word = first_word(rpc);
		if (!xdr_rpcrdma2_hdr_reply_middle(&hx, &r)) die("reply_middle");
	}
	post(s, 0, rpc + 4, n - 4);
}
/* call_cont sends the n-octet Call in rbuf in pieces of the given sizes
 * (the last piece, CALL_INLINE, takes the rest); remaining is what each
 * middle piece says remains, plus lie on the piece numbered lie_at. */
static void call_cont(uint32 xid, unsigned n, const unsigned *pieces, int np, int lie_at, int lie)
{
	static char msg[65536];
	unsigned off = 0;
	memcpy(msg, rbuf, n);
	for (int i = 0; i < np; i++) {
		unsigned rem = n - off - pieces[i];
		middle(0, xid, RDMA2_CALL_MIDDLE, rem + (i == lie_at ? lie : 0), msg + off, pieces[i]);
		off += pieces[i];
	}
	memcpy(rbuf, msg + off, n - off);
	call_inline(xid, 0, NULL, NULL, NULL, n - off);
}
static void reply_cont(uint32 xid, const char *msg, unsigned n, const unsigned *pieces, int np)
{
	unsigned off = 0;
	for (int i = 0; i < np; i++) {
		middle(1, xid, RDMA2_REPLY_MIDDLE, n - off - pieces[i], msg + off, pieces[i]);
		off += pieces[i];
	}
	reply_inline(xid, 0, NULL, msg + off, n - off);
}
static void reply_external(uint32 xid, rpcrdma2_write_list *writes, rpcrdma2_write_chunk *reply)
{
	rpcrdma2_hdr_reply_external h;
	hbegin();
	prefix(1, xid, RDMA2_REPLY_EXTERNAL);
	h.rdma_writes = writes;
	h.rdma_reply = reply;
	if (!xdr_rpcrdma2_hdr_reply_external(&hx, &h)) die("reply_external");
	post(1, 0, "", 0);
}
static void rdma_error(uint32 xid, rpcrdma2_hdr_error *e)
{
	hbegin();
	prefix(1, xid, RDMA2_ERROR);
	if (!xdr_rpcrdma2_hdr_error(&hx, e)) die("error");
	post(1, 0, "", 0);
}

static char saved[65536];

/* Both files open with the Transport Properties exchange. */
static void valid(void)
{
	unsigned n;
	uint32 xid = 0x52000001;

	label("client CONNPROP_MIDDLE");
	prop_u32(RDMA2_PROPID_SBSIZ, 8192);
	prop_u32(RDMA2_PROPID_RSSIZ, 1048576);
	connprop(0, RDMA2_CONNPROP_MIDDLE);
	label("server CONNPROP_FINAL");
	prop_u32(RDMA2_PROPID_SBSIZ, 8192);
	prop_u32(RDMA2_PROPID_RBSIZ, 8192);
	prop_u32(RDMA2_PROPID_RCSIZ, 16);
	prop_u32(RDMA2_PROPID_BRS, RDMA2_RVRSDIR_CONT);
	prop_raw(99, "\1\2\3", 3); /* unknown: skipped, whatever its size */
	connprop(1, RDMA2_CONNPROP_FINAL);
	label("client CONNPROP_FINAL");
	prop_u32(RDMA2_PROPID_RBSIZ, 8192);
	prop_raw(RDMA2_PROPID_RCSIZ, "", 0); /* empty: the default */
	prop_hostauth("rdmashark");
	connprop(0, RDMA2_CONNPROP_FINAL);
	label("server GRANT");
	grant(1);

	label("NULL Call");
	n = null_call(xid);
	call_inline(xid, 0, NULL, NULL, NULL, n);
	n = null_reply(xid);
	label("NULL Reply");
	reply_inline(xid, 0, NULL, rbuf, n);

	/* A 6000-octet WRITE inline: over 4096, within the 8192 the properties set. */
	xid++;
	n = write_call(xid, 6000, 0);
	label("6000-octet WRITE Call");
	call_inline(xid, 0, NULL, NULL, NULL, n);
	n = write_reply(xid, 6000);
	reply_inline(xid, 0, NULL, rbuf, n);

	/* A 10000-octet WRITE continued: pieces of 4001 and 3002 octets
	 * (off word boundaries), the rest in CALL_INLINE. */
	xid++;
	n = write_call(xid, 10000, 0);
	{
		unsigned pieces[] = {4001, 3002};
		label("continued WRITE Call");
		call_cont(xid, n, pieces, 2, -1, 0);
	}
	n = write_reply(xid, 10000);
	reply_inline(xid, 0, NULL, rbuf, n);

	/* A WRITE whose data moves in a Read chunk (position: after the
	 * opaque's length word), solicited invalidation of the Read chunk's
	 * handle, a Reply sent With Invalidate of it. */
	xid++;
	{
		rpcrdma2_read_list rl = {{0, {0xAA000001, 4096, 0x10000}}, NULL};
		n = write_call(xid, 4096, 1);
		rl.rdma_entry.rdma_position = n;
		label("WRITE Call with a Read chunk");
		call_inline(xid, 0xAA000001, &rl, NULL, NULL, n);
		rdma('R', 0xAA000001, 0x10000, pattern, 4096);
		n = write_reply(xid, 4096);
		label("WRITE Reply With Invalidate");
		reply_inline(xid, 0xAA000001, NULL, rbuf, n);
	}

	/* A READ whose data comes back in a Write chunk of two segments. */
	xid++;
	{
		rpcrdma2_segment two[2] = {{0xBB000001, 4096, 0x20000}, {0xBB000002, 4096, 0x30000}};
		rpcrdma2_write_list wl = {{{2, two}}, NULL};
		n = read_call(xid, 8192);
		label("READ Call with a Write chunk");
		call_inline(xid, 0, NULL, &wl, NULL, n);
		rdma('W', 0xBB000001, 0x20000, pattern, 4096);
		rdma('W', 0xBB000002, 0x30000, pattern + 4096, 4096);
		n = read_reply(xid, 8192, 1);
		reply_inline(xid, 0, &wl, rbuf, n);
	}

	/* A Call moved whole by its Call chunk (RDMA2_CALL_EXTERNAL), its
	 * Reply by the Reply chunk (RDMA2_REPLY_EXTERNAL). */
	xid++;
	{
		rpcrdma2_read_list cl = {{0, {0xCC000001, 0, 0x40000}}, NULL};
		rpcrdma2_hdr_call_external h;
		rpcrdma2_write_chunk rc = wchunk(0xCC000002, 1024, 0x50000);
		n = null_call(xid);
		cl.rdma_entry.rdma_target.rdma_length = n;
		memcpy(saved, rbuf, n);
		hbegin();
		prefix(0, xid, RDMA2_CALL_EXTERNAL);
		h.rdma_inv_handle = 0;
		h.rdma_call = &cl;
		h.rdma_reads = NULL;
		h.rdma_provisional_writes = NULL;
		h.rdma_provisional_reply = &rc;
		if (!xdr_rpcrdma2_hdr_call_external(&hx, &h)) die("call_external");
		label("CALL_EXTERNAL");
		post(0, 0, "", 0);
		rdma('R', 0xCC000001, 0x40000, saved, n);
		n = null_reply(xid);
		rdma('W', 0xCC000002, 0x50000, rbuf, n);
		rc = wchunk(0xCC000002, n, 0x50000);
		label("REPLY_EXTERNAL");
		reply_external(xid, NULL, &rc);
	}

	/* A 12000-octet READ Reply without a Reply chunk: Message Continuation. */
	xid++;
	n = read_call(xid, 12000);
	label("READ Call, no Reply chunk");
	call_inline(xid, 0, NULL, NULL, NULL, n);
	n = read_reply(xid, 12000, 0);
	memcpy(saved, rbuf, n);
	{
		unsigned pieces[] = {6002, 3001};
		label("continued READ Reply");
		reply_cont(xid, saved, n, pieces, 2);
	}

	/* The same READ with a Reply chunk large enough: the Reply goes in it. */
	xid++;
	{
		rpcrdma2_write_chunk rc = wchunk(0xDD000001, 16384, 0x60000);
		n = read_call(xid, 12000);
		label("READ Call with a Reply chunk");
		call_inline(xid, 0, NULL, NULL, &rc, n);
		n = read_reply(xid, 12000, 0);
		rdma('W', 0xDD000001, 0x60000, rbuf, n);
		rc = wchunk(0xDD000001, n, 0x60000);
		label("READ Reply in the Reply chunk");
		reply_external(xid, NULL, &rc);
	}

	/* Every error code, each answering a NULL Call. */
	{
		uint32 codes[] = {RDMA2_ERR_VERS, RDMA2_ERR_BAD_XDR, RDMA2_ERR_BAD_PROPVAL, RDMA2_ERR_INVAL_HTYPE,
			RDMA2_ERR_INVAL_CONT, RDMA2_ERR_READ_CHUNKS, RDMA2_ERR_WRITE_CHUNKS, RDMA2_ERR_SEGMENTS,
			RDMA2_ERR_WRITE_RESOURCE, RDMA2_ERR_REPLY_RESOURCE, RDMA2_ERR_VERS_MISMATCH, RDMA2_ERR_SYSTEM};
		for (unsigned i = 0; i < sizeof codes / sizeof codes[0]; i++) {
			rpcrdma2_hdr_error e;
			char l[64];
			memset(&e, 0, sizeof e);
			xid++;
			n = null_call(xid);
			call_inline(xid, 0, NULL, NULL, NULL, n);
			e.rdma_err = codes[i];
			switch (codes[i]) {
			case RDMA2_ERR_VERS: e.rpcrdma2_hdr_error_u.rdma_vrange.rdma_vers_low = 2; e.rpcrdma2_hdr_error_u.rdma_vrange.rdma_vers_high = 2; break;
			case RDMA2_ERR_READ_CHUNKS: e.rpcrdma2_hdr_error_u.rdma_max_chunks = 2; break;
			case RDMA2_ERR_WRITE_CHUNKS: e.rpcrdma2_hdr_error_u.rdma_max_wchunks = 3; break;
			case RDMA2_ERR_SEGMENTS: e.rpcrdma2_hdr_error_u.rdma_max_segments = 16; break;
			case RDMA2_ERR_WRITE_RESOURCE: e.rpcrdma2_hdr_error_u.rdma_writeres.rdma_chunk_index = 1; e.rpcrdma2_hdr_error_u.rdma_writeres.rdma_length_needed = 8192; break;
			case RDMA2_ERR_REPLY_RESOURCE: e.rpcrdma2_hdr_error_u.rdma_length_needed = 12288; break;
			}
			snprintf(l, sizeof l, "RDMA2_ERROR %u", codes[i]);
			label(l);
			rdma_error(xid, &e);
		}
	}
}

/* v1msg sends a version 1 RDMA_MSG (RFC 8166 section 4.2: rdma_xid,
 * rdma_vers 1, rdma_credit, rdma_proc RDMA_MSG, three empty chunk lists),
 * then the RPC message in rbuf. RFC 8166's XDR is not the draft's: its
 * seven words are written with the generated xdr_uint32. */
static void v1msg(int s, uint32 xid, unsigned n)
{
	uint32 w[] = {xid, 1, 32, 0 /* RDMA_MSG */, 0, 0, 0};
	hbegin();
	for (unsigned i = 0; i < 7; i++)
		if (!xdr_uint32(&hx, &w[i])) die("v1");
	post(s, 0, rbuf, n);
}

/* fallback: on the base capture's second connection the client offers
 * version 2 and the server, which does not have it, refuses with
 * RDMA2_ERROR/RDMA2_ERR_VERS (versions 1..1) in the version of the
 * request ("Server Does Not Support RPC-over-RDMA Version 2"); the client
 * goes on in version 1. */
static void fallback(void)
{
	uint32 xid = 0x53000001;
	unsigned n;
	rpcrdma2_hdr_error e;

	putchar('C');
	putchar(1);
	sent[0] = sent[1] = 0;
	n = null_call(xid);
	label("second connection: version 2 NULL Call");
	call_inline(xid, 0, NULL, NULL, NULL, n);
	memset(&e, 0, sizeof e);
	e.rdma_err = RDMA2_ERR_VERS;
	e.rpcrdma2_hdr_error_u.rdma_vrange.rdma_vers_low = 1;
	e.rpcrdma2_hdr_error_u.rdma_vrange.rdma_vers_high = 1;
	label("RDMA2_ERR_VERS 1..1");
	rdma_error(xid, &e);
	xid++;
	n = null_call(xid);
	label("version 1 Call after RDMA2_ERR_VERS");
	v1msg(0, xid, n);
	n = null_reply(xid);
	label("version 1 Reply");
	v1msg(1, xid, n);
}

static void forbidden(void)
{
	unsigned n;
	uint32 xid = 0x5F000001;
	uint32 eight[2] = {0, htonl(8192)};

	/* The client's SBSIZ is 8 octets: BAD_PROPVAL; the message's RBSIZ
	 * is not applied either. */
	label("client CONNPROP_FINAL, bad SBSIZ");
	prop_u32(RDMA2_PROPID_RBSIZ, 8192);
	prop_raw(RDMA2_PROPID_SBSIZ, eight, 8);
	connprop(0, RDMA2_CONNPROP_FINAL);
	label("server CONNPROP_FINAL");
	prop_u32(RDMA2_PROPID_RBSIZ, 6000);
	prop_u32(RDMA2_PROPID_BRS, RDMA2_RVRSDIR_SIMPLE);
	connprop(1, RDMA2_CONNPROP_FINAL);

	/* A 5000-octet WRITE inline: over the 4096 left in force (the
	 * client's SBSIZ default against the server's RBSIZ 6000). */
	n = write_call(xid, 5000, 0);
	label("5000-octet WRITE Call");
	call_inline(xid, 0, NULL, NULL, NULL, n);
	n = write_reply(xid, 5000);
	reply_inline(xid, 0, NULL, rbuf, n);

	/* A continued Call whose first piece says 4 octets more remain than do. */
	xid++;
	n = write_call(xid, 3000, 0);
	{
		unsigned pieces[] = {1001, 1002};
		label("continued WRITE Call, rdma_remaining off by 4");
		call_cont(xid, n, pieces, 2, 0, 4);
	}
	n = write_reply(xid, 3000);
	reply_inline(xid, 0, NULL, rbuf, n);

	/* REPLY_EXTERNAL answering a Call that provisioned no Reply chunk. */
	xid++;
	n = null_call(xid);
	label("NULL Call, no Reply chunk");
	call_inline(xid, 0, NULL, NULL, NULL, n);
	{
		rpcrdma2_write_chunk rc = wchunk(0xEE000001, 24, 0x70000);
		n = null_reply(xid);
		rdma('W', 0xEE000001, 0x70000, rbuf, n);
		label("REPLY_EXTERNAL without a provisioned chunk");
		reply_external(xid, NULL, &rc);
	}

	/* A 6000-octet Reply continued although the Call provisioned a
	 * Reply chunk large enough. */
	xid++;
	{
		rpcrdma2_write_chunk rc = wchunk(0xEE000002, 16384, 0x80000);
		unsigned pieces[] = {3001};
		n = read_call(xid, 6000);
		label("READ Call with a Reply chunk");
		call_inline(xid, 0, NULL, NULL, &rc, n);
		n = read_reply(xid, 6000, 0);
		memcpy(saved, rbuf, n);
		label("READ Reply continued, Reply chunk unused");
		reply_cont(xid, saved, n, pieces, 1);
	}

	/* RDMA2_GRANT with a non-zero rdma_xid. */
	hbegin();
	prefix(1, 0x12345678, RDMA2_GRANT);
	label("GRANT with an XID");
	post(1, 0, "", 0);

	/* A CALL_MIDDLE followed by another message's CALL_INLINE. */
	xid++;
	n = null_call(xid);
	memcpy(saved, rbuf, n);
	label("CALL_MIDDLE");
	middle(0, xid, RDMA2_CALL_MIDDLE, n - 12, saved, 12);
	n = null_call(xid + 1);
	label("CALL_INLINE of another XID");
	call_inline(xid + 1, 0, NULL, NULL, NULL, n);
	n = null_reply(xid + 1);
	reply_inline(xid + 1, 0, NULL, rbuf, n);
	xid++;

	/* A CONNPROP-type message after the client's CONNPROP_FINAL. */
	prop_u32(RDMA2_PROPID_RCSIZ, 8);
	label("CONNPROP_MIDDLE after CONNPROP_FINAL");
	connprop(0, RDMA2_CONNPROP_MIDDLE);
	label("CONNPROP_FINAL after CONNPROP_FINAL");
	connprop(0, RDMA2_CONNPROP_FINAL);

	/* RDMA2_CALL_EXTERNAL without a Call chunk. */
	xid++;
	{
		rpcrdma2_hdr_call_external h;
		memset(&h, 0, sizeof h);
		hbegin();
		prefix(0, xid, RDMA2_CALL_EXTERNAL);
		if (!xdr_rpcrdma2_hdr_call_external(&hx, &h)) die("call_external");
		label("CALL_EXTERNAL without a Call chunk");
		post(0, 0, "", 0);
	}

	/* A position-zero Read chunk in a version 2 Read list. */
	xid++;
	{
		rpcrdma2_read_list rl = {{0, {0xEE000003, 40, 0x90000}}, NULL};
		n = null_call(xid);
		label("CALL_INLINE with a position-zero Read chunk");
		call_inline(xid, 0, &rl, NULL, NULL, n);
		n = null_reply(xid);
		reply_inline(xid, 0, NULL, rbuf, n);
	}

	/* Send With Invalidate of a handle the Call did not solicit. */
	xid++;
	{
		rpcrdma2_write_chunk rc = wchunk(0xEE000004, 1024, 0xA0000);
		n = null_call(xid);
		call_inline(xid, 0xEE000004, NULL, NULL, &rc, n);
		n = null_reply(xid);
		label("Reply With Invalidate of another handle");
		reply_inline(xid, 0xEE000005, NULL, rbuf, n);
	}

	/* The client posts Calls without a word from the server until its
	 * sent count exceeds the largest limit the server granted: the
	 * draft's "MUST NOT post this message if the connection's 'Sent
	 * message counter' is greater than ... 'Received credits'". */
	{
		uint32 first = xid + 1;
		while (sent[0] <= maxcredit[1]) {
			xid++;
			n = null_call(xid);
			call_inline(xid, 0, NULL, NULL, NULL, n);
		}
		xid++;
		n = null_call(xid);
		label("Call past the credit limit");
		call_inline(xid, 0, NULL, NULL, NULL, n);
		for (uint32 x = first; x <= xid; x++) {
			n = null_reply(x);
			reply_inline(x, 0, NULL, rbuf, n);
		}
	}

	/* A version 1 message once version 2 is in effect (RFC 8166 rdma_msg:
	 * xid, vers 1, credit, RDMA_MSG, three empty lists, the Call). */
	xid++;
	n = null_call(xid);
	hbegin();
	{
		uint32 v1[] = {xid, 1, 32, 0, 0, 0, 0};
		for (unsigned i = 0; i < 7; i++)
			if (!xdr_uint32(&hx, &v1[i])) die("v1");
	}
	label("version 1 Call");
	post(0, 0, rbuf, n);
}

int main(int argc, char **argv)
{
	for (unsigned i = 0; i < sizeof pattern; i++)
		pattern[i] = (char)(i * 7 + 1);
	if (argc == 2 && strcmp(argv[1], "valid") == 0) {
		valid();
		fallback();
	}
	else if (argc == 2 && strcmp(argv[1], "forbidden") == 0)
		forbidden();
	else {
		fprintf(stderr, "usage: enc valid|forbidden\n");
		return 2;
	}
	return fflush(stdout) != 0;
}
