#!/usr/bin/env python3
"""Ground truth for the captures in this directory, from Wireshark's dissector, not from ibwire.

    python3 interop/testdata/truth.py FILE.pcap[.gz] ...     one block per file
    python3 interop/testdata/truth.py --mtu 1024 -v FILE     -v: list every NAK, gap, READ retry

Reads `tshark -T fields` (Wireshark's own InfiniBand/RoCEv2 dissector) and counts, per RC
requester stream (source IP, destination IP, destination QPN of request packets):

  packets       request packets of the stream
  messages      distinct messages: for SEND/WRITE the distinct PSNs of a FIRST or ONLY packet (each
                message's first transmission once, however often it was resent); for READ the
                distinct READ requests, where a request whose PSN equals an earlier request's PSN is
                a resend of it and a request whose PSN lies inside an earlier READ's response PSN
                range (psn+1 .. psn+ceil(len/mtu)-1) is rxe re-requesting the rest of that READ
                after a loss (its RETH then must point mtu*(offset) further, for that much less)
  resent        request packets whose PSN is not beyond the highest PSN the stream had shown
                before (go-back-N: seen again, or filling a gap of packets lost before br0)
  dup           request packets whose PSN the capture had already shown (a subset of resent)
  gaps          times a request PSN jumped beyond highest+1 (packets lost in the guest before br0:
                netem drops there), and the PSNs skipped in total
and of what goes back (a stream is every packet from one source to one destination QPN, so with
both sides on QPN 0x11 one stream holds a side's requests and the ACKs it sends for the other's):
  ACKNOWLEDGE   ACKNOWLEDGE packets the stream's source sent, by AETH syndrome: ACK, RNR NAK, NAK
                PSN sequence error, NAK invalid request, NAK remote access, NAK remote operational error
  READ done     READ messages whose LAST or ONLY response (PSN = the READ's last PSN) was seen
  READ responses  response packets, those repeating a PSN already seen, and gaps (a response PSN
                beyond highest+1: responses lost in the responder's guest)
  first response to each middle re-request: the opcode of the first response carrying its PSN
Instances: a stream whose QPN is silent for more than --idle seconds (default 1) and then carries a
packet again starts a new instance (#2, #3, ...): a new connection that reuses the QPN.
Runs: streams are grouped into runs by time; a run is a maximal interval in which some stream
is active (first to last packet); consecutive runs are separate connections (perftest reruns).

PSNs compare in 24-bit serial arithmetic. The MTU (default 1024, rxe's active MTU on a 1500-byte
netdev) only matters for READ response ranges.
"""
import argparse
import collections
import subprocess
import sys

FIELDS = ["frame.number", "frame.time_relative", "ip.src", "ip.dst", "infiniband.bth.opcode",
          "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.reth.va",
          "infiniband.reth.dmalen", "infiniband.aeth.syndrome"]

OPNAME = {0: "SEND_FIRST", 1: "SEND_MIDDLE", 2: "SEND_LAST", 3: "SEND_LAST_IMM", 4: "SEND_ONLY",
          5: "SEND_ONLY_IMM", 6: "WRITE_FIRST", 7: "WRITE_MIDDLE", 8: "WRITE_LAST",
          9: "WRITE_LAST_IMM", 10: "WRITE_ONLY", 11: "WRITE_ONLY_IMM", 12: "READ_REQUEST",
          13: "READ_RESP_FIRST", 14: "READ_RESP_MIDDLE", 15: "READ_RESP_LAST",
          16: "READ_RESP_ONLY", 17: "ACK", 18: "ATOMIC_ACK", 19: "CMP_SWAP", 20: "FETCH_ADD"}
REQUEST = set(range(0, 13)) | {19, 20}
FIRST_OR_ONLY = {0, 4, 5, 6, 10, 11}  # SEND/WRITE opcodes that start a message
NAK_CODE = {0: "NAK_PSN_SEQ", 1: "NAK_INV_REQ", 2: "NAK_REM_ACCESS", 3: "NAK_REM_OP"}
M24 = 1 << 24


def sdiff(a, b):
    """a - b in 24-bit serial arithmetic, in [-2^23, 2^23)."""
    return (a - b + (M24 >> 1)) % M24 - (M24 >> 1)


def packets(path):
    out = subprocess.run(["tshark", "-r", path, "-Y", "infiniband", "-T", "fields", "-E",
                          "separator=\t", "-E", "occurrence=f"] + sum((["-e", f] for f in FIELDS), []),
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split("\t")
        yield dict(frame=int(f[0]), t=float(f[1]), src=f[2], dst=f[3], op=int(f[4]),
                   qp=int(f[5], 16), psn=int(f[6]), va=int(f[7], 16) if f[7] else None,
                   len=int(f[8]) if f[8] else None, syn=int(f[9], 16 if f[9].startswith("0x") else 10)
                   if f[9] else None)


class Stream:
    def __init__(self, key):
        self.key = key
        self.pkts = 0
        self.ops = collections.Counter()
        self.first = self.last = None
        self.highest = None
        self.seen = set()
        self.resent = self.dup = self.gaps = self.skipped = 0
        self.msg_psns = set()        # SEND/WRITE: PSN of each FIRST/ONLY
        self.reads = []              # READ: [start psn, npkts, va, len, first frame]
        self.read_resends = self.read_retries = self.read_retry_bad = 0
        self.acks = collections.Counter()
        self.resp_last_psns = set()  # READ responses LAST/ONLY seen (in the response stream)
        self.resp = self.resp_dup = self.resp_gaps = self.resp_skipped = 0
        self.resp_highest = None
        self.resp_seen = set()
        self.resp_first_op = {}      # response psn -> [(frame, opcode)] in capture order
        self.retries = []            # READ re-requested from the middle: (frame, psn)
        self.log = []


def analyse(path, mtu, verbose, idle=1.0):
    streams = {}
    instance = {}  # (src, dst, qpn) -> current instance number
    for p in packets(path):
        base = (p["src"], p["dst"], p["qp"])
        n = instance.setdefault(base, 1)
        prev = streams.get(base + (n,))
        if prev is not None and p["t"] - prev.last["t"] > idle:
            # the same QPN after a pause: a new connection (perftest rerun), its own instance
            n = instance[base] = n + 1
            streams[base + (n,)] = Stream(base + (n,))
            streams[base + (n,)].log.append("frame %d: instance %d starts %.3f s after frame %d, psn %d (previous instance's last psn %d)" %
                                            (p["frame"], n, p["t"] - prev.last["t"], prev.last["frame"], p["psn"], prev.last["psn"]))
        key = base + (n,)
        s = streams.setdefault(key, Stream(key))
        s.pkts += 1
        s.ops[p["op"]] += 1
        s.first = s.first or p
        s.last = p
        op, psn = p["op"], p["psn"]
        if op == 17:
            syn = p["syn"]
            kind = syn >> 5
            name = {0: "ACK", 1: "RNR_NAK"}.get(kind) or (NAK_CODE.get(syn & 0x1f, "NAK_%d" % (syn & 0x1f)) if kind == 3 else "AETH_%#x" % syn)
            s.acks[name] += 1
            if name != "ACK":
                s.log.append("frame %d: %s psn %d" % (p["frame"], name, psn))
        elif 13 <= op <= 16:
            if op in (15, 16):
                s.resp_last_psns.add(psn)
            s.resp += 1
            s.resp_dup += psn in s.resp_seen
            if s.resp_highest is not None and sdiff(psn, s.resp_highest) > 1:
                s.resp_gaps += 1
                s.resp_skipped += sdiff(psn, s.resp_highest) - 1
                s.log.append("frame %d: response gap, psn %d after highest %d" % (p["frame"], psn, s.resp_highest))
            if s.resp_highest is None or sdiff(psn, s.resp_highest) > 0:
                s.resp_highest = psn
            s.resp_seen.add(psn)
            s.resp_first_op.setdefault(psn, []).append((p["frame"], op))
        if op not in REQUEST:
            continue
        if s.highest is None or sdiff(psn, s.highest) > 0:
            if s.highest is not None and sdiff(psn, s.highest) > 1:
                s.gaps += 1
                s.skipped += sdiff(psn, s.highest) - 1
                s.log.append("frame %d: gap, psn %d after highest %d" % (p["frame"], psn, s.highest))
            last = psn
            if op == 12:  # a READ occupies ceil(len/mtu) PSNs
                last = (psn + max(1, -(-p["len"] // mtu)) - 1) % M24
            s.highest = last
        else:
            s.resent += 1
            s.dup += psn in s.seen
        s.seen.add(psn)
        if op in FIRST_OR_ONLY:
            s.msg_psns.add(psn)
        elif op == 12:
            n = max(1, -(-p["len"] // mtu))
            for r in s.reads:
                off = sdiff(psn, r[0])
                if off == 0:
                    s.read_resends += 1
                    s.log.append("frame %d: READ psn %d resent (first frame %d)" % (p["frame"], psn, r[4]))
                    break
                if 0 < off < r[1]:
                    s.read_retries += 1
                    s.retries.append((p["frame"], psn))
                    ok = p["va"] == r[2] + off * mtu and p["len"] == r[3] - off * mtu
                    s.read_retry_bad += not ok
                    s.log.append("frame %d: READ psn %d re-requests READ psn %d (frame %d) from packet %d%s" %
                                 (p["frame"], psn, r[0], r[4], off, "" if ok else " (RETH does not match)"))
                    break
            else:
                s.reads.append([psn, n, p["va"], p["len"], p["frame"]])
    return streams


def runs(streams):
    """Maximal time intervals in which some stream is active: [(t0, t1, frame0, frame1, [keys])]."""
    iv = sorted((s.first["t"], s.last["t"], s.first["frame"], s.last["frame"], k) for k, s in streams.items())
    out = []
    for t0, t1, f0, f1, k in iv:
        if out and t0 <= out[-1][1]:
            r = out[-1]
            out[-1] = (r[0], max(r[1], t1), min(r[2], f0), max(r[3], f1), r[4] + [k])
        else:
            out.append((t0, t1, f0, f1, [k]))
    return out


def report(path, mtu, verbose, idle):
    streams = analyse(path, mtu, verbose, idle)
    total = sum(s.pkts for s in streams.values())
    print("== %s: %d RoCE packets, %d streams" % (path, total, len(streams)))
    for i, (t0, t1, f0, f1, keys) in enumerate(runs(streams), 1):
        print("run %d: frames %d-%d, t %.3f-%.3f s, QPNs %s" % (
            i, f0, f1, t0, t1, " ".join("%s>%s:%#x#%d" % k for k in keys)))
    for k, s in sorted(streams.items(), key=lambda kv: kv[1].first["frame"]):
        reqs = sum(n for op, n in s.ops.items() if op in REQUEST)
        peer = []
        ops = " ".join("%s=%d" % (OPNAME.get(op, op), n) for op, n in sorted(s.ops.items()))
        print("stream %s > %s QPN %#x instance %d: %d packets, frames %d-%d, first psn %d (%s)" %
              (k + (s.pkts, s.first["frame"], s.last["frame"], s.first["psn"], ops)))
        if reqs:
            # the response/ACK stream of this requester: other direction, packets whose PSNs are ours
            peer = [r for r in streams.values() if r.key[0] == k[1] and r.key[1] == k[0]
                    and r.first["t"] <= s.last["t"] and r.last["t"] >= s.first["t"]]
            print("  requests: %d packets, resent %d (dup %d), gaps %d (%d PSNs skipped)" %
                  (reqs, s.resent, s.dup, s.gaps, s.skipped))
            if s.msg_psns:
                print("  SEND/WRITE messages (distinct FIRST/ONLY PSNs): %d" % len(s.msg_psns))
            if s.reads:
                done = sum(1 for r in s.reads if any((r[0] + r[1] - 1) % M24 in q.resp_last_psns for q in peer))
                print("  READ messages: %d distinct, %d resent whole, %d re-requested from the middle"
                      " (%d with a RETH that does not match), %d with their LAST/ONLY response seen" %
                      (len(s.reads), s.read_resends, s.read_retries, s.read_retry_bad, done))
        if s.resp:
            print("  READ responses: %d packets, %d repeat a PSN already seen, gaps %d (%d PSNs skipped)" %
                  (s.resp, s.resp_dup, s.resp_gaps, s.resp_skipped))
        if s.reads:
            first = collections.Counter()
            for f, psn in s.retries:
                after = [op for fr, op in next((q.resp_first_op.get(psn, []) for q in peer), []) if fr > f]
                first[OPNAME[after[0]] if after else "none"] += 1
            if s.retries:
                print("  first response to each middle re-request: " + " ".join("%s=%d" % kv for kv in sorted(first.items())))
            never = sum(1 for r in s.reads for i in range(r[1])
                        if not any((r[0] + i) % M24 in q.resp_seen for q in peer))
            print("  READ PSNs never seen in a response: %d" % never)
        if s.acks:
            print("  ACKNOWLEDGE: " + " ".join("%s=%d" % kv for kv in sorted(s.acks.items())))
        if verbose:
            for line in s.log:
                print("    " + line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mtu", type=int, default=1024)
    ap.add_argument("-v", action="store_true", help="list every NAK, gap and READ retry")
    ap.add_argument("--idle", type=float, default=1.0,
                    help="seconds of silence on a QPN after which its next packet starts a new instance")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    for f in a.files:
        report(f, a.mtu, a.v, a.idle)


if __name__ == "__main__":
    sys.exit(main())
