"""RC pair vectors (vectors/pair/rc_*.json), run by gen_pair.py.

With the responder in rnic_top a NIC executes the RC requests it
receives: WRITE payloads land in the MR the RETH names, SENDs fill the
RECVs its host posted (RQ order, scatter lists of 1..4 entries), WRITE with
immediate consumes a RECV and completes it with opcode 129, and each
message is acknowledged, so the requester completes RC work. The
testbench predicts all of it from the vector and the frames on the wire
(docs/pair.md); these vectors cover lengths around the MTU, scatter,
four QPs both ways, IPv6 and VLAN, PSN wrap, the responder's errors, RNR,
a QP not ready and a slow receiving host.

Layout of each host (on top of gen_tx.py's): MR 0 (key 0x1230) is the
source region, 2 MiB at 0x10_0000 (VA 0x7F00_0000_0000); MR 1 (key
0x4561) is the receive region, 2 MiB at 0x40_0000 (VA 0x7E00_0000_0000),
LOCAL_WRITE and REMOTE_WRITE; both filled with a seeded pattern, so bytes
the responder must not touch are checked too. RQ rings at 0x3000_0000 +
64 KiB * qp; requester completions in CQ 0 (CQ 2 for QPs posted all at
once, so that a wait on CQ 0 counts the paced QPs alone), receive
completions in CQ 1.

Timing discipline (docs/pair.md, "RECVs and timing"): the receiver posts
its RECVs first thing; the sender starts at cycle 400 after configuration
(wait_until), and a QP whose messages need RECVs sends them paced (post,
wait for the completion, post the next) so that rq_fetch's two slots are
refilled before the next SEND arrives.
"""
import gen_tx

PHYS1 = 0x40_0000
VA1 = 0x7E00_0000_0000
KEY1 = 0x4561  # entry 1
LEN1 = 0x20_0000
START = 400
# setup_during_traffic's cycles (after configuration).
SETUP_A = 522
SETUP_B = 629

CHECK = ("both NICs' model and RTL in lockstep; each NIC's request frames byte for byte against "
         "frames built from its WQEs and memory; the receiver's effects predicted by "
         "resp_reference from the frames that arrived, decoded by the testbench's codec: every "
         "host write (bytes, addresses, MR rights) and the final contents of every MR, every "
         "RECV CQE (wr_id, status, opcode, byte_len, immediate and its flag, src_qp, CQ, order, "
         "flushes), every ACK/NAK frame byte for byte and as a coalescing of the required "
         "responses, CTRL.STATE ERROR after a remote error; the requester's RC completions only "
         "as the ACKs that arrived cover them; the link, receive counters and PCIe rules")


class Side:
    """One host under construction."""

    def __init__(self, name, seed):
        self.name = name
        self.seed = seed
        self.qps = []
        self.wqes = []
        self.recvs = []
        self.program = []
        self.mrs = [gen_tx.mr(),
                    gen_tx.mr(index=1, key=KEY1, va=VA1, length=LEN1, pbase=PHYS1,
                              access=["local_write", "remote_write"])]
        self.root_complex = None
        self.config = None
        self.wrid = 0x100 if name == "a" else 0x200

    def qp(self, n, mtu=1024, ipv6=False, vlan=None, psn=None, peer_psn=None, access=None,
           state=None, rnr=0, log=6):
        me, peer = (0, 1) if self.name == "a" else (1, 0)
        q = gen_qp(self.name, n, mtu, ipv6=ipv6)
        q["type"] = "rc"
        q["psn"] = psn if psn is not None else 100 * n + 7 + 50 * me
        q["epsn"] = peer_psn if peer_psn is not None else 100 * n + 7 + 50 * peer
        q["rq"] = {"base": hex(0x3000_0000 + 0x1_0000 * n), "log_size": log}
        q["rq_cq"] = 1
        q["remote_access"] = access if access is not None else ["remote_write", "remote_read"]
        if rnr:
            q["min_rnr_timer"] = rnr
        if vlan is not None:
            q["vlan"] = {"vid": vlan, "pcp": 3}
        if state:
            q["state"] = state
        self.qps.append(q)
        return q

    def recv(self, qp, sges, num_sge=None):
        """sges: [(offset in MR 1, length)]; returns the RECV."""
        self.wrid += 1
        r = {"qp": qp, "wr_id": hex(0xEC00_0000 + self.wrid),
             "sges": [{"addr": hex(VA1 + o), "len": n, "lkey": hex(KEY1)} for o, n in sges]}
        if num_sge is not None:
            r["num_sge"] = num_sge
        self.recvs.append(r)
        return r

    def post_recvs(self):
        """Every RECV of every QP, first thing."""
        steps = []
        for q in self.qps:
            n = sum(1 for r in self.recvs if r["qp"] == q["qp"])
            if n:
                steps.append({"post_recv": {"qp": q["qp"], "recvs": n}})
        self.program = steps + self.program

    def wqe(self, qp, op, length, src_off, dst_off=0, rkey=KEY1, imm=None, lkey=gen_tx.KEY0,
            rva=VA1):
        self.wrid += 1
        w = {"qp": qp, "opcode": op, "wr_id": hex(0x5E00_0000 + self.wrid), "len": length,
             "laddr": hex(gen_tx.VA + src_off), "lkey": hex(lkey),
             "raddr": hex(rva + dst_off), "rkey": hex(rkey),
             "imm": hex(imm if imm is not None else 0x1A0000 + self.wrid)}
        self.wqes.append(w)
        return w

    def send_all(self, qp, paced):
        """Posts QP qp's WQEs: all at once, or one at a time, each after the
        completion of the one before (CQ 0 counts every QP's: the waits
        count this host's requester completions so far)."""
        ws = [w for w in self.wqes if w["qp"] == qp]
        if not ws:
            return
        if not paced:
            self.program.append({"post_send": {"qp": qp, "wqes": len(ws)}})
            return
        for _ in ws:
            self.program.append({"post_send": {"qp": qp, "wqes": 1}})
            self.done += 1
            self.program.append({"wait_cqes": {"cq": 0, "count": self.done}})

    def build(self, pace=(), plain=(), start=START):
        """pace: QPs sent one WQE at a time (in this order, each waiting for
        its completion); plain: QPs posted at once, before the paced ones."""
        self.done = 0
        self.program = [{"wait_until": {"cycle": start}}] if (pace or plain) else []
        # The waits count CQ 0: only the paced QPs complete there.
        cqs = [gen_tx.cq(0), gen_tx.cq(1)]
        for q in self.qps:
            if q["qp"] in plain:
                q["cq"] = 2
        if plain:
            cqs.append(gen_tx.cq(2))
        for n in plain:
            self.send_all(n, False)
        for n in pace:
            self.send_all(n, True)
        self.post_recvs()
        h = {"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": self.seed},
                        {"addr": hex(PHYS1), "len": LEN1, "seed": self.seed + 100}],
             "qps": self.qps, "mrs": self.mrs, "cqs": cqs,
             "wqes": self.wqes, "recvs": self.recvs, "program": self.program}
        if self.root_complex:
            h["root_complex"] = self.root_complex
        if self.config:
            h["config"] = self.config
        return h


gen_qp = None  # gen_pair.qp, set by gen_pair.main


def lengths_vector(vec, mtu, name):
    """SEND/RECV, WRITE and WRITE with immediate of lengths 0, 1, MTU-1,
    MTU, MTU+1 and 64 KiB, A to B on three QPs (one per operation)."""
    a, b = Side("a", 11), Side("b", 12)
    lens = [0, 1, mtu - 1, mtu, mtu + 1, 64 * 1024]
    for n in range(3):
        a.qp(n, mtu)
        b.qp(n, mtu)
    off = 0
    for k, ln in enumerate(lens):
        a.wqe(0, "send", ln, src_off=0x1_0000 * k + 3)
        b.recv(0, [(off, 64 * 1024 + 64)])
        off += 0x1_1000
    for k, ln in enumerate(lens):
        a.wqe(1, "write", ln, src_off=0x8_0000 + 0x1_0000 * k + 5, dst_off=0x8_0000 + 0x1_1000 * k + 1)
    for k, ln in enumerate(lens):
        a.wqe(2, "write_imm", ln, src_off=0x1_0000 * k + 9, dst_off=0x10_0000 + 0x1_1000 * k + 7)
        b.recv(2, [(0x1F_0000 + 0x100 * k, 16)])
    vec(name,
        "RC, MTU %d, A to B: SEND/RECV (QP 0), WRITE (QP 1) and WRITE with immediate (QP 2) of "
        "%s bytes, unaligned source and destination; B places every payload (SENDs into 64 KiB "
        "RECVs in RQ order, WRITEs at the RETH's VA), completes a RECV per SEND (opcode 128, "
        "byte_len the SEND's) and per WRITE with immediate (opcode 129, byte_len the WRITE's, "
        "the immediate flagged), ACKs every message; A completes every WQE only once an ACK "
        "covers it" % (mtu, ", ".join(str(x) for x in lens)),
        a.build(pace=[0, 2], plain=[1]), b.build())


def main(write):
    def vec(*args, **kw):
        write(*args, check=CHECK, **kw)

    lengths_vector(vec, 1024, "rc_lengths_mtu1024")
    lengths_vector(vec, 4096, "rc_lengths_mtu4096")

    # Scatter lists of 1..4 entries, unaligned, filled exactly, partly and
    # across every entry boundary.
    a, b = Side("a", 21), Side("b", 22)
    a.qp(0, 256)
    b.qp(0, 256)
    cases = [
        (700, [(0x101, 700)]),
        (700, [(0x1003, 300), (0x2007, 400)]),
        (1000, [(0x3001, 1), (0x4002, 255), (0x5003, 513), (0x6005, 231)]),
        (900, [(0x7011, 100), (0x8013, 200), (0x9017, 300), (0xA019, 4000)]),
        (1, [(0xB001, 3), (0xC001, 5)]),
        (0, [(0xD001, 8)]),
        (2500, [(0xE00F, 1000), (0x1_0001, 1000), (0x1_1001, 250), (0x1_2003, 250)]),
    ]
    for k, (ln, sg) in enumerate(cases):
        a.wqe(0, "send", ln, src_off=0x1_0000 * k + 0x33)
        b.recv(0, sg)
    vec("rc_scatter",
        "RC SENDs (MTU 256, up to 10 packets) into RECVs of 1 to 4 scatter entries at unaligned "
        "addresses: filled exactly, partly, 1 byte, 0 bytes, and messages whose packets cross "
        "entry boundaries; B writes each byte at its entry's place and nothing past the "
        "message, completes each RECV with the SEND's length",
        a.build(pace=[0]), b.build())

    # Four QPs per host, both directions at once, every operation.
    a, b = Side("a", 31), Side("b", 32)
    mtus = [256, 1024, 2048, 4096]
    for n in range(4):
        a.qp(n, mtus[n])
        b.qp(n, mtus[n])
    for s, o, base in ((a, b, 0), (b, a, 0x10_0000)):
        for n in range(4):
            s.wqe(n, "write", 5000 + 1000 * n, src_off=0x4_0000 * n, dst_off=base + 0x4_0000 * n)
            s.wqe(n, "send", 3000 - 500 * n, src_off=0x4_0000 * n + 0x2_0000)
            o.recv(n, [(base + 0x4_0000 * n + 0x2_0000, 4096)])
            s.wqe(n, "write_imm", 700 + n, src_off=0x4_0000 * n + 0x3_0000,
                  dst_off=base + 0x4_0000 * n + 0x3_0000)
            o.recv(n, [(base + 0x4_0000 * n + 0x3_8000, 8)])
    vec("rc_four_qps_both_ways",
        "Four RC QPs per host (MTU 256, 1024, 2048, 4096), A and B at once: on each QP a WRITE, "
        "a SEND and a WRITE with immediate each way; each NIC is requester and responder at "
        "once, its ACKs sharing the control path with its requests; every payload placed, "
        "every RECV completed, every WQE completed by the other side's ACKs",
        a.build(pace=[0, 1, 2, 3]), b.build(pace=[0, 1, 2, 3]))

    setup_during_traffic(vec)
    setup_during_traffic(vec, t_a=674, t_b=630, name="rc_setup_during_nak", lose=9)

    # RQ prefetch under pressure: four RQ doorbells fill rq_fetch's reads in
    # flight, a fifth waits, and competes with the first QP once its read
    # is back (the first QP has fetched all it had: nothing more to do).
    a, b = Side("a", 337), Side("b", 338)
    for n in range(8):
        a.qp(n, 1024)
        b.qp(n, 1024)
    qs = [0, 5, 6, 7, 3]
    for k, n in enumerate(qs):
        b.recv(n, [(0x1000 * (k + 1), 256)])
        a.wqe(n, "send", 100 + k, src_off=0x101 + 0x200 * k)
    hb = b.build()
    hb["program"] = [s for s in hb["program"] if "post_recv" not in s]
    hb["rq_doorbells"] = [{"at": 1000 + k + 6 * (k == 4), "qp": n, "recvs": 1}
                          for k, n in enumerate(qs)]
    vec("rc_rq_fetch_five_doorbells",
        "B rings RQ doorbells for QPs 0, 5, 6 and 7 on consecutive cycles from 1000 (one RECV "
        "each), which fills rq_fetch's four reads in flight, and for QP 3 at 1010, which "
        "waits; when QP 0's read is back, QP 0 has nothing more to fetch and QP 3's read goes "
        "out next. A then SENDs once on each of those QPs (from cycle 2000): every SEND lands "
        "in its RECV and completes on both sides",
        a.build(plain=qs, start=2000), hb)

    # IPv6 and VLAN.
    a, b = Side("a", 41), Side("b", 42)
    a.qp(0, 1024, ipv6=True)
    b.qp(0, 1024, ipv6=True)
    a.qp(1, 2048, vlan=100)
    b.qp(1, 2048, vlan=100)
    a.qp(2, 4096, ipv6=True, vlan=7)
    b.qp(2, 4096, ipv6=True, vlan=7)
    for n in range(3):
        a.wqe(n, "write", 9000, src_off=0x2_0000 * n, dst_off=0x2_0000 * n + 1)
        a.wqe(n, "send", 2049, src_off=0x2_0000 * n + 0x1_0000)
        b.recv(n, [(0x10_0000 + 0x1_0000 * n, 1024), (0x10_8000 + 0x1_0000 * n, 2048)])
        b.wqe(n, "send", 333, src_off=0x2_0000 * n + 0x8000)
        a.recv(n, [(0x18_0000 + 0x1000 * n, 400)])
    vec("rc_ipv6_vlan",
        "RC over IPv6 (QP 0), VLAN 100 (QP 1) and both (QP 2): WRITEs and SENDs A to B, SENDs "
        "B to A; the ACK frames carry the QP's own IP version and VLAN tag",
        a.build(pace=[0, 1, 2]), b.build(pace=[0, 1, 2]))

    # PSN wrap: the first PSN 3 before 2^24, multi-packet messages across it.
    a, b = Side("a", 51), Side("b", 52)
    a.qp(0, 1024, psn=0xFF_FFFD, peer_psn=0xFF_FFFE)
    b.qp(0, 1024, psn=0xFF_FFFE, peer_psn=0xFF_FFFD)
    a.wqe(0, "write", 6000, src_off=0x11, dst_off=0x13)
    a.wqe(0, "send", 3000, src_off=0x1_0011)
    b.recv(0, [(0x2_0000, 4000)])
    b.wqe(0, "write_imm", 5000, src_off=0x3_0000, dst_off=0x3_0001)
    a.recv(0, [(0x4_0000, 8)])
    vec("rc_psn_wrap",
        "RC with PSNs starting 3 and 2 before 2^24: a 6-packet WRITE and a 3-packet SEND A to B "
        "and a 5-packet WRITE with immediate B to A cross the wrap; ePSN, the ACKs' PSNs and the "
        "requesters' windows wrap with them",
        a.build(pace=[0]), b.build(pace=[0]))

    reads(vec)
    read_job_full(vec)
    errors(vec)
    figures(vec)
    sweep(vec)
    read_payload_faults(vec)
    ack_coalescing(vec)
    read_payload_fail(vec)
    read_payload_timeout(vec)


def read_payload_fail(vec):
    """B's host read of a READ's payload fails every time: B drops the
    response frame, A's timer runs out, the retries run out."""
    a, b = Side("a", 113), Side("b", 114)
    q = a.qp(0, 1024)
    q["timeout"] = 1
    q["retry_cnt"] = 1
    b.qp(0, 1024)
    a.qp(1, 1024)
    b.qp(1, 1024)
    a.wqe(0, "read", 3000, src_off=0, dst_off=0x1_0000, lkey=KEY1, rkey=gen_tx.KEY0,
          rva=gen_tx.VA)
    a.wqes[-1]["laddr"] = hex(VA1 + 0x1_0003)
    a.wqe(1, "read", 500, src_off=0, dst_off=0x3_0000, lkey=KEY1, rkey=gen_tx.KEY0,
          rva=gen_tx.VA)
    a.wqes[-1]["laddr"] = hex(VA1 + 0x3_0005)
    # The second of QP 0's three responses (bytes 1024..2047 of the READ).
    b.root_complex = {"latency": 100, "seed": 5,
                      "faults": [{"addr": hex(gen_tx.PHYS + 0x1_0500), "len": 4, "kind": "ur"}]}
    vec("rc_read_payload_fault",
        "B's host read for the middle response of A's 3000-byte READ on QP 0 gets UR every "
        "time: B sends the FIRST and LAST responses and drops the MIDDLE one (DMA_ERR). A "
        "takes the FIRST, sees the gap at the LAST and, when its local ACK timer (timeout 1: "
        "8.2 us) runs out, asks again from the missing PSN; B answers the re-request and "
        "fails the same way; with retry_cnt 1 the READ ends with status 12 (retry exceeded) "
        "and QP 0 goes to ERROR. The READ of 500 bytes on QP 1 completes as usual",
        a.build(plain=[0, 1]), b.build(), max_cycles=200_000)


def ack_coalescing(vec):
    """B's ACKs wait behind its own long frames while A's short messages
    keep asking for more."""
    a, b = Side("a", 121), Side("b", 122)
    a.qp(0, 4096)
    b.qp(0, 4096)
    for k in range(48):
        a.wqe(0, "write", 256, src_off=0x100 * k, dst_off=0x100 * k)
    for k in range(4):
        b.wqe(0, "write", 65536, src_off=0x1_0000 * k, dst_off=0x10_0000 + 0x1_0000 * k)
    vec("rc_ack_coalescing",
        "ACK coalescing: on one RC QP of MTU 4096, A sends 48 WRITEs of 256 bytes (one packet "
        "each, each asking for an ACK) while B streams four 64 KiB WRITEs back (4 KiB frames, "
        "about 80 cycles each on the wire). B's ACK for one of A's WRITEs waits for the frame "
        "B is sending, and a newer ACK of the QP replaces one not yet sent (ACK_COALESCED "
        "counts each): A sees fewer ACKs than it asked for, never an older after a newer, "
        "and completes all 48 WRITEs as the ACKs cover them",
        a.build(plain=[0]), b.build(plain=[0]))


def read_payload_faults(vec):
    """Stray completions (a tag B never issued) before the good data of
    two of B's host reads: the payload of A's READ and B's RECV fetch."""
    a, b = Side("a", 111), Side("b", 112)
    a.qp(0, 1024)
    b.qp(0, 1024)
    a.wqe(0, "read", 500, src_off=0, dst_off=0x2_0000, lkey=KEY1, rkey=gen_tx.KEY0,
          rva=gen_tx.VA)
    a.wqes[-1]["laddr"] = hex(VA1 + 0x2_0005)
    a.wqe(0, "send", 300, src_off=0x3_0000)
    b.recv(0, [(0x4_0000, 512)])
    b.root_complex = {"latency": 100, "seed": 5,
                      "faults": [{"addr": hex(gen_tx.PHYS + 0x2_0100), "len": 4, "kind": "stray"},
                                 {"addr": hex(0x3000_0000), "len": 4, "kind": "stray"}]}
    vec("rc_stray_completions",
        "Stray PCIe completions at B (a tag B never issued, before the good data): one on "
        "the read of the payload of A's READ of 500 bytes, one on the fetch of the RECV that "
        "A's SEND of 300 bytes fills. B drops and counts both (CPL_UNEXPECTED 2), answers "
        "the READ with its memory, places the SEND and completes the RECV; A completes both",
        a.build(plain=[0]), b.build())


def sweep(vec):
    """The functional coverage cross (docs/coverage.md): every operation at
    every length class, per transport, IP version and VLAN, A to B. MTU
    256; lengths 0, 1, 255, 256, 257 (two packets), 1000 (four). QP 0
    sends SEND and SEND with immediate into RECVs, QP 1 WRITEs, QP 2 WRITEs
    with immediate (each consuming a RECV), QP 3 (RC only) READs from B's
    MR 0 into A's MR 1."""
    lens = [0, 1, 255, 256, 257, 1000]
    for kind in ("rc", "uc"):
        for ipv6 in (False, True):
            for vlan in (None, 5):
                a, b = Side("a", 61), Side("b", 62)
                nq = 4 if kind == "rc" else 3
                for n in range(nq):
                    for s in (a, b):
                        s.qp(n, 256, ipv6=ipv6, vlan=vlan)["type"] = kind
                for k, ln in enumerate(lens):
                    for j, op in enumerate(("send", "send_imm")):
                        a.wqe(0, op, ln, src_off=0x2000 * (2 * k + j) + 3)
                        b.recv(0, [(0x2000 * (2 * k + j) + 1, 1024)])
                    a.wqe(1, "write", ln, src_off=0x4_0000 + 0x2000 * k + 5,
                          dst_off=0x4_0000 + 0x2000 * k + 7)
                    a.wqe(2, "write_imm", ln, src_off=0x8_0000 + 0x2000 * k + 9,
                          dst_off=0x8_0000 + 0x2000 * k + 11)
                    b.recv(2, [(0xC_0000 + 0x100 * k, 16)])
                    if kind == "rc":
                        a.wqe(3, "read", ln, src_off=0, dst_off=0x2000 * k + 13, lkey=KEY1,
                              rkey=gen_tx.KEY0, rva=gen_tx.VA)
                        a.wqes[-1]["laddr"] = hex(VA1 + 0x10_0000 + 0x2000 * k + 1)
                ip = "ipv6" if ipv6 else "ipv4"
                tag = "vlan" if vlan else "untagged"
                ops = "SEND, SEND with immediate, WRITE, WRITE with immediate" + (
                    " and READ" if kind == "rc" else "")
                vec("cover_%s_%s_%s" % (kind, ip, tag),
                    "Coverage sweep, %s over %s%s, MTU 256, A to B: %s of 0, 1, 255, 256, 257 "
                    "and 1000 bytes (one packet short of, at and past the MTU, and four "
                    "packets), one QP per operation; B places every payload, completes a RECV "
                    "per SEND and WRITE with immediate%s"
                    % (kind.upper(), "IPv6" if ipv6 else "IPv4",
                       " with VLAN 5" if vlan else "", ops,
                       ", answers every READ and ACKs every message" if kind == "rc"
                       else " (UC: no ACKs)"),
                    a.build(pace=[0, 2], plain=[1] + ([3] if kind == "rc" else [])), b.build())


def figures(vec):
    # The goodput figure of tests/pair_figures.rs: eight 64 KiB WRITEs on
    # one QP at MTU 4096 over a link of 250 cycles each way (RTT 500), the
    # sender's host answering reads after 100 cycles in 512-byte
    # completions.
    a, b = Side("a", 111), Side("b", 112)
    a.qp(0, 4096)
    b.qp(0, 4096)
    for k in range(8):
        a.wqe(0, "write", 65536, src_off=0x1_0000 * k, dst_off=0x1_0000 * k)
    a.root_complex = {"latency": 100, "cpl_size": 512, "seed": 3}
    # B writes the payload in 4 KiB MWrs: at the default MPS of 256 a TLP
    # of 272 bytes takes 5 beats (51 payload bytes a cycle), slower than
    # the link's 62, and rx_buf would overflow (docs/pair.md).
    b.config = {"mps": 4096}
    vec("rc_write_64k_rtt500",
        "Goodput: eight 64 KiB RC WRITEs posted at once on one QP (MTU 4096) over a link of 250 "
        "cycles each way, A's host answering reads after 100 cycles in 512-byte completions; "
        "tests/pair_figures.rs measures the payload rate on A's tx from these frames' timing "
        "against the wire bound",
        a.build(plain=[0]), b.build(),
        link={"a_to_b": {"delay": 250}, "b_to_a": {"delay": 250}})
    # The same for READs: A reads eight 64 KiB blocks of B's memory; B's
    # host answers reads after 100 cycles in 512-byte completions, A
    # places the responses with 4 KiB MWrs.
    a, b = Side("a", 121), Side("b", 122)
    a.qp(0, 4096)
    b.qp(0, 4096)
    for k in range(8):
        a.wqe(0, "read", 65536, src_off=0, dst_off=0x1_0000 * k, lkey=KEY1, rkey=gen_tx.KEY0,
              rva=gen_tx.VA)
        a.wqes[-1]["laddr"] = hex(VA1 + 0x1_0000 * k)
    b.root_complex = {"latency": 100, "cpl_size": 512, "seed": 4}
    a.config = {"mps": 4096}
    vec("rc_read_64k_rtt500",
        "Goodput: eight 64 KiB RC READs posted at once on one QP (MTU 4096) over a link of 250 "
        "cycles each way, B's host answering reads after 100 cycles in 512-byte completions, "
        "A placing the responses with 4 KiB MWrs; tests/pair_figures.rs measures the READ "
        "response payload rate on B's tx against the wire and completion bounds",
        a.build(plain=[0]), b.build(),
        link={"a_to_b": {"delay": 250}, "b_to_a": {"delay": 250}})


def reads(vec):
    # B answers A's READs (rd_resp, tx_engine); A places the responses
    # (rd_sink) and completes each READ once its data is in.
    a, b = Side("a", 101), Side("b", 102)
    a.qp(0, 1024)
    b.qp(0, 1024)
    a.qp(1, 4096, ipv6=True, vlan=9)
    b.qp(1, 4096, ipv6=True, vlan=9)
    a.qp(2, 256)
    b.qp(2, 256)
    lens = [0, 1, 1023, 1024, 1025, 9000]
    for k, ln in enumerate(lens):
        # Local: A's MR 1 (LOCAL_WRITE); remote: B's MR 0 (REMOTE_READ).
        a.wqe(0, "read", ln, src_off=0, dst_off=0x1_0000 * k + 3, lkey=KEY1, rkey=gen_tx.KEY0,
              rva=gen_tx.VA)
        a.wqes[-1]["laddr"] = hex(VA1 + 0x2000 * k + 1)
    a.wqe(1, "read", 65536, src_off=0, dst_off=0x10_0005, lkey=KEY1, rkey=gen_tx.KEY0,
          rva=gen_tx.VA)
    a.wqes[-1]["laddr"] = hex(VA1 + 0x10_0000)
    a.wqe(2, "write", 2000, src_off=0x8_0000, dst_off=0x8_0001)
    vec("rc_read_b_answers",
        "RC READs A from B: on QP 0 (MTU 1024) READs of 0, 1, 1023, 1024, 1025 and 9000 bytes "
        "from unaligned VAs, on QP 1 (MTU 4096, IPv6, VLAN 9) one of 64 KiB, all posted at once; "
        "B answers each with READ RESPONSE ONLY or FIRST/MIDDLE.../LAST packets carrying its "
        "host memory at the READ's VA, the READ's PSNs and the AETH on FIRST/LAST/ONLY, while "
        "a WRITE on QP 2 (MTU 256) is placed and acknowledged as usual. A takes each response "
        "at the PSN its READ expects (rd_sink), writes its payload at the READ's local address "
        "and completes the READ (CQE opcode 2, byte_len its length) once the last response's data "
        "is in host memory",
        a.build(plain=[0, 1], pace=[2]), b.build())

    # max_rd_atomic reached: A keeps at most 2 READs outstanding on QP 0,
    # B executes at most 2 at once (max_dest_rd_atomic); a WRITE posted
    # behind the READs waits with them (the send queue stops at the bound).
    a, b = Side("a", 103), Side("b", 104)
    a.qp(0, 1024)["max_rd_atomic"] = 2
    b.qp(0, 1024)["max_dest_rd_atomic"] = 2
    for k in range(6):
        a.wqe(0, "read", 5000 + 1000 * k, src_off=0, dst_off=0x1_0000 * k + 5, lkey=KEY1,
              rkey=gen_tx.KEY0, rva=gen_tx.VA + 0x100 * k)
        a.wqes[-1]["laddr"] = hex(VA1 + 0x2_0000 * k + 3)
    a.wqe(0, "write", 3000, src_off=0x9_0000, dst_off=0x9_0001)
    vec("rc_read_max_rd",
        "RC READs at the bound: A posts six READs of 5000..10000 bytes (5 to 10 responses of "
        "MTU 1024) and then a WRITE on QP 0 at once, with max_rd_atomic 2; B's QP 0 has "
        "max_dest_rd_atomic 2. A sends the third READ only after the first one's last "
        "response was placed (never more than two outstanding, checked from the frames: "
        "requests sent on A's tx_* against the last responses arrived on its rx_*), B "
        "refuses none (READ_JOB_FULL 0), every READ's data lands at its local address and "
        "completes in order, then the WRITE",
        a.build(plain=[0]), b.build())


def read_job_full(vec):
    """A keeps more READs outstanding than B executes at once."""
    a, b = Side("a", 105), Side("b", 106)
    q = a.qp(0, 1024)
    q["max_rd_atomic"] = 3
    q["timeout"] = 1
    b.qp(0, 1024)["max_dest_rd_atomic"] = 1
    for k in range(3):
        a.wqe(0, "read", 5000, src_off=0, dst_off=0x1_0000 * k + 5, lkey=KEY1,
              rkey=gen_tx.KEY0, rva=gen_tx.VA + 0x100 * k)
        a.wqes[-1]["laddr"] = hex(VA1 + 0x2_0000 * k + 3)
    vec("rc_read_job_full",
        "RC READs beyond the responder's limit: A posts three READs of 5000 bytes on QP 0 at "
        "once with max_rd_atomic 3 and a local ACK timeout of 1 (8.2 us); B's QP 0 executes "
        "at most one at a time (max_dest_rd_atomic 1), so rd_resp refuses a READ that "
        "arrives while one is unanswered (READ_JOB_FULL counts each, no response). A's timer "
        "runs out and it asks again from the first READ not answered (go-back-N), until "
        "every READ's data is in and all three complete in order",
        a.build(plain=[0]), b.build(), max_cycles=400_000)


def errors(vec):
    # Each: A sends one bad request (QP 0) and a good WRITE on QP 1 that
    # must be unaffected; B's QP 0 NAKs, goes to ERROR (a remote error)
    # and flushes the RECVs it holds.
    def err(name, what, setup, wqe, nak, written="nothing is written for it"):
        a, b = Side("a", 61), Side("b", 62)
        a.qp(0, 1024)
        b.qp(0, 1024)
        a.qp(1, 1024)
        b.qp(1, 1024)
        setup(a, b)
        wqe(a)
        a.wqe(1, "write", 3000, src_off=0x9_0000, dst_off=0x9_0001)
        vec(name,
            "RC, A to B: %s. B answers with %s and moves QP 0 to ERROR, flushing the RECVs it "
            "still holds (status 5); %s. A completes the refused WQE with the NAK's status (9 "
            "invalid request, 10 remote access) and byte_len 0 and moves its QP 0 to ERROR. A's "
            "good WRITE on QP 1 is placed and completed as usual" % (what, nak, written),
            a.build(plain=[0, 1]), b.build())

    err("rc_err_bad_rkey", "a WRITE whose rkey names no valid MR",
        lambda a, b: b.recv(0, [(0x100, 64)]),
        lambda a: a.wqe(0, "write", 100, src_off=0x100, rkey=0x4571),
        "a remote access NAK (0x62)")
    err("rc_err_range", "a WRITE that ends 1 byte past the end of B's MR",
        lambda a, b: None,
        lambda a: a.wqe(0, "write", 2000, src_off=0x100, dst_off=LEN1 - 1999),
        "a remote access NAK (0x62)")

    def no_rw(a, b):
        b.mrs.append(gen_tx.mr(index=2, key=0x7892, va=0x7D00_0000_0000, length=0x1_0000,
                               pbase=0x70_0000, access=["local_write", "remote_read"]))
    err("rc_err_no_remote_write", "a WRITE into an MR that grants LOCAL_WRITE and REMOTE_READ but "
        "not REMOTE_WRITE", no_rw,
        lambda a: a.wqe(0, "write", 64, src_off=0x100, rkey=0x7892, rva=0x7D00_0000_0000),
        "a remote access NAK (0x62)")

    def other_pd(a, b):
        b.mrs.append(gen_tx.mr(index=3, key=0x9993, va=0x7C00_0000_0000, length=0x1_0000,
                               pbase=0x70_0000, pd=2))
    err("rc_err_pd_mismatch", "a WRITE into an MR of another protection domain", other_pd,
        lambda a: a.wqe(0, "write", 64, src_off=0x100, rkey=0x9993, rva=0x7C00_0000_0000),
        "a remote access NAK (0x62)")

    def short_recv(a, b):
        b.recv(0, [(0x1000, 1000), (0x3000, 1000)])
        b.recv(0, [(0x5000, 4096)])
    err("rc_err_send_too_long", "a 2-packet SEND of 2001 bytes into a RECV of 2000 (two entries)",
        short_recv, lambda a: a.wqe(0, "send", 2001, src_off=0x100),
        "an invalid request NAK (0x61), completes the RECV with status 1 (local length error)",
        written="the first packet's 1024 bytes are placed in the RECV before the second "
        "overflows it")

    # The receiver's own fault: its RECV's scatter entry names an MR
    # without LOCAL_WRITE.
    a, b = Side("a", 65), Side("b", 66)
    for n in range(2):
        a.qp(n, 1024)
        b.qp(n, 1024)
    b.mrs.append(gen_tx.mr(index=2, key=0x7892, va=0x7D00_0000_0000, length=0x1_0000,
                           pbase=0x70_0000, access=["remote_write", "remote_read"]))
    b.recv(0, [(0x100, 256)])
    b.recvs[-1]["sges"][0].update(addr=hex(0x7D00_0000_0100), lkey=hex(0x7892))
    # Two WRITEs first, so that the NAK's MSN (2) is not the reset value.
    a.wqe(0, "write", 200, src_off=0x1000, dst_off=0x1000)
    a.wqe(0, "write", 300, src_off=0x2000, dst_off=0x2000)
    a.wqe(0, "send", 100, src_off=0x100)
    a.wqe(1, "write", 3000, src_off=0x9_0000, dst_off=0x9_0001)
    vec("rc_err_recv_no_local_write",
        "RC, A to B: two WRITEs, then a SEND into a RECV whose scatter entry names an MR of "
        "B's that grants REMOTE_WRITE and REMOTE_READ but not LOCAL_WRITE. It is B's own "
        "fault: B completes the RECV with status 4 (local protection error), answers with a "
        "remote operational error NAK (0x63, MSN 2: the two WRITEs) and moves QP 0 to ERROR, "
        "writing nothing for it; A completes the WRITEs, then the SEND with status 11 (remote "
        "operational error) and byte_len 0, and moves its QP 0 to ERROR. A's good WRITE on "
        "QP 1 is placed and completed as usual",
        a.build(plain=[0, 1]), b.build())

    # RNR: no RECV posted; B stays in RTS; A's rnr_retry runs out.
    a, b = Side("a", 71), Side("b", 72)
    a.qp(0, 1024)["rnr_retry"] = 1
    b.qp(0, 1024, rnr=1)
    a.qp(1, 1024)["rnr_retry"] = 0
    b.qp(1, 1024, rnr=2)
    a.wqe(0, "send", 500, src_off=0x100)
    a.wqe(1, "write_imm", 64, src_off=0x200, dst_off=0x300)
    vec("rc_rnr_no_recv",
        "RC, A to B with no RECV posted at B: a SEND (QP 0, B's min_rnr_timer 1: 10 us) and a "
        "WRITE with immediate (QP 1, min_rnr_timer 2: 20 us) each get RNR NAKs (syndrome 0x21 "
        "/ 0x22) with ePSN unmoved; A's QP 0 (rnr_retry 1) waits out the first, resends once "
        "and gives up at the second, QP 1 (rnr_retry 0) gives up at the first: both complete "
        "with status 13 (RNR retry exceeded) and go to ERROR; nothing is written at B",
        a.build(plain=[0, 1]), b.build())

    # Not ready: B's QP 0 in INIT (frames dropped as for an unknown QP), QP 1
    # in RTR (receives and acknowledges, sends nothing).
    a, b = Side("a", 81), Side("b", 82)
    a.qp(0, 1024)
    b.qp(0, 1024, state="init")
    a.qp(1, 1024)
    b.qp(1, 1024, state="rtr")
    a.wqe(0, "write", 1500, src_off=0x100, dst_off=0x100)
    a.wqe(1, "write", 1500, src_off=0x1100, dst_off=0x2100)
    a.wqe(1, "send", 100, src_off=0x3100)
    b.recv(1, [(0x4000, 128)])
    vec("rc_not_ready",
        "RC, A to B: B's QP 0 is in INIT, so its frames are dropped (drop_qp) and nothing "
        "answers A's WRITE, which never completes; B's QP 1 is in RTR, which receives: the "
        "WRITE and the SEND are placed, the RECV completed, both acknowledged",
        a.build(plain=[0], pace=[1]), b.build())

    # A slow receiving host: long read latency and a low rq_ready.
    a, b = Side("a", 91), Side("b", 92)
    a.qp(0, 4096)
    b.qp(0, 4096)
    b.root_complex = {"latency": 1200, "rq_ready_percent": 30, "seed": 5}
    a.wqe(0, "write", 12000, src_off=0x101, dst_off=0x203)
    for k in range(2):
        a.wqe(0, "send", 1500 + 1000 * k, src_off=0x1_0000 * (k + 1))
        b.recv(0, [(0x2_0000 * (k + 1), 2000), (0x2_0000 * (k + 1) + 0x1_0000, 4000)])
    vec("rc_slow_receiver",
        "RC, A to B, B's host slow (read latency 1200 cycles, rq_ready 30%): B's RECV prefetch "
        "and its payload and CQE writes wait on the host; A's WRITE and its two SENDs (paced, "
        "each after the previous one's completion) are placed and completed all the same",
        a.build(pace=[0], start=7000), b.build(), max_cycles=2_000_000)


def read_payload_timeout(vec):
    """B's host never completes the read of a READ's payload: B's
    completion timeout drops the response frame, and A's retries run out."""
    a, b = Side("a", 115), Side("b", 116)
    q = a.qp(0, 1024)
    q["timeout"] = 1
    q["retry_cnt"] = 1
    b.qp(0, 1024)
    a.wqe(0, "read", 600, src_off=0, dst_off=0x1_0000, lkey=KEY1, rkey=gen_tx.KEY0,
          rva=gen_tx.VA)
    a.wqes[-1]["laddr"] = hex(VA1 + 0x1_0003)
    b.root_complex = {"latency": 100, "seed": 5,
                      "faults": [{"addr": hex(gen_tx.PHYS + 0x1_0100), "len": 4, "kind": "drop"}]}
    b.config = {"cpl_timeout": 1000}
    vec("rc_read_payload_timeout",
        "B's host never answers the read of the payload of A's READ of 600 bytes (no "
        "completion): after CPL_TIMEOUT (1000 cycles here) B's read fails and B drops the "
        "response frame (CPL_TIMEOUT, DMA_ERR). A's local ACK timer (timeout 1: 8.2 us) runs "
        "out, A asks again, B executes the duplicate READ and times out the same way; with "
        "retry_cnt 1 the READ ends with status 12 (retry exceeded) and QP 0 goes to ERROR",
        a.build(plain=[0]), b.build(), max_cycles=200_000)


def setup_during_traffic(vec, t_a=SETUP_A, t_b=SETUP_B, name="rc_setup_during_traffic",
                         lose=None):
    """QP 1 is set up on both hosts (setup_qp) while QP 0 streams: A's
    PSN write lands as QP 0's packets leave, B's EPSN write as QP 0's
    packets are executed (the cycles picked so that they meet)."""
    a, b = Side("a", 61), Side("b", 62)
    for n in range(2):
        a.qp(n, 256)
        b.qp(n, 256)
    if lose is not None:
        a.qps[0]["timeout"] = 2
    a.qps[1]["psn"] = 0xC0_0000
    b.qps[1]["epsn"] = 0xC0_0000
    for k in range(48):
        w = a.wqe(0, "write", 64, src_off=0x100 * k + 1, dst_off=0x100 * k + 3)
        w["signaled"] = k == 47
    for k in range(4):
        a.wqe(1, "write", 300, src_off=0x1_0000 + 0x1000 * k, dst_off=0x1_0000 + 0x1000 * k + 7)
    ha = a.build(plain=[0])
    ha["program"] += [{"wait_until": {"cycle": t_a}}, {"setup_qp": {"qp": 1}},
                      {"wait_until": {"cycle": t_a + 600}}, {"post_send": {"qp": 1, "wqes": 4}}]
    hb = b.build()
    hb["program"] += [{"wait_until": {"cycle": t_b}}, {"setup_qp": {"qp": 1}}]
    meets = ("A's PSN write meets a report of one of QP 0's packets leaving (ack_tracker "
             "must restart QP 1's window all the same)") if lose is None else (
        f"The link A to B loses QP 0's PSN {lose} once (QP 0: local ACK timeout 2), and B's "
        "sequence NAK reaches A's ack_tracker in the cycle A's PSN write of QP 1 takes "
        f"effect: the NAK must be taken all the same, and A goes back to {lose}")
    vec(name,
        "QP 0 streams 48 WRITEs of 64 bytes A to B (MTU 256, unsignaled but the last) while "
        f"QP 1, in RESET until then on both hosts, is set up by the hosts' setup_qp steps: "
        f"B's at cycle {t_b}, A's at {t_a}, each the same MMIO writes configuration makes "
        f"(PSN and EPSN 0xC0_0000). {meets}; B's EPSN write meets "
        "the execution of one of QP 0's packets (the responder's row write of QP 1 must not "
        "be lost to QP 0's). Then A WRITEs 4 x 300 bytes on QP 1: all placed, all "
        "acknowledged, every WQE of both QPs completes",
        ha, hb, link=None if lose is None else {
            "a_to_b": {"delay": 0, "faults": [{"drop": {"qp": 0, "psn": lose, "first": 1}}]},
            "b_to_a": {"delay": 0}})

