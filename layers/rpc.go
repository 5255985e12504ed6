package layers

import (
	"encoding/binary"
	"strconv"
)

// ONC RPC version 2 (RFC 5531 §9), the message an RPC-over-RDMA header
// carries (or a chunk, for RDMA_NOMSG). XDR words, big-endian.
//
// Call:
//
//	+---------------+---------------+---------------+---------------+
//	| xid | msg_type 0 | rpcvers 2 | prog | vers | proc |           |
//	| cred: flavor, length, body (AUTH_UNIX: stamp, machinename,    |
//	|       uid, gid, gids<16>) | verf: flavor, length, body | args |
//
// Reply:
//
//	| xid | msg_type 1 | reply_stat: MSG_ACCEPTED 0 | verf | accept_stat
//	|   (PROG_MISMATCH: low, high) | results                           |
//	|                 | MSG_DENIED 1 | reject_stat: RPC_MISMATCH 0    |
//	|   (low, high), AUTH_ERROR 1 (auth_stat)                          |
//
// The program, version and procedure of a reply are its call's: only
// matching the two by XID tells them (decode does it).

// RPCMsgType is an RPC message's msg_type.
type RPCMsgType uint32

// RPC message types.
const (
	RPCCall  RPCMsgType = 0
	RPCReply RPCMsgType = 1
)

func (t RPCMsgType) String() string { return enumName([]string{"Call", "Reply"}, uint(t), "Unknown") }

// RPCReplyStat is a reply's reply_stat.
type RPCReplyStat uint32

// Reply states.
const (
	RPCAccepted RPCReplyStat = 0
	RPCDenied   RPCReplyStat = 1
)

func (s RPCReplyStat) String() string {
	return enumName([]string{"accepted", "denied"}, uint(s), "Unknown")
}

// RPCAcceptStat is an accepted reply's accept_stat.
type RPCAcceptStat uint32

// Accept states (RFC 5531 §9).
const (
	RPCSuccess      RPCAcceptStat = 0
	RPCProgUnavail  RPCAcceptStat = 1
	RPCProgMismatch RPCAcceptStat = 2
	RPCProcUnavail  RPCAcceptStat = 3
	RPCGarbageArgs  RPCAcceptStat = 4
	RPCSystemErr    RPCAcceptStat = 5
)

// rpcAcceptStatNames are Wireshark's texts for accept_stat.
var rpcAcceptStatNames = [...]string{"RPC executed successfully", "remote hasn't exported program",
	"remote can't support version #", "program can't support procedure", "procedure can't decode params",
	"system error"}

func (s RPCAcceptStat) String() string { return enumName(rpcAcceptStatNames[:], uint(s), "Unknown") }

// RPCRejectStat is a denied reply's reject_stat.
type RPCRejectStat uint32

// Reject states.
const (
	RPCMismatch  RPCRejectStat = 0
	RPCAuthError RPCRejectStat = 1
)

func (s RPCRejectStat) String() string {
	return enumName([]string{"RPC_MISMATCH", "AUTH_ERROR"}, uint(s), "Unknown")
}

// RPCAuthFlavor is an opaque_auth's flavor.
type RPCAuthFlavor uint32

// Auth flavors.
const (
	RPCAuthNull  RPCAuthFlavor = 0
	RPCAuthUnix  RPCAuthFlavor = 1
	RPCAuthShort RPCAuthFlavor = 2
	RPCAuthDES   RPCAuthFlavor = 3
	RPCAuthGSS   RPCAuthFlavor = 6
)

func (f RPCAuthFlavor) String() string {
	return enumName([]string{RPCAuthNull: "AUTH_NULL", RPCAuthUnix: "AUTH_UNIX", RPCAuthShort: "AUTH_SHORT", RPCAuthDES: "AUTH_DES",
		RPCAuthGSS: "RPCSEC_GSS"}, uint(f), "Unknown")
}

// rpcMaxAuth is the largest opaque_auth body RFC 5531 allows.
const rpcMaxAuth = 400

// RPCAuth is a credential or verifier.
type RPCAuth struct {
	Flavor RPCAuthFlavor
	Body   []byte
	// AUTH_UNIX's (RFC 5531 Appendix A), when Unix.
	Unix        bool
	Stamp       uint32
	MachineName []byte
	UID, GID    uint32
	GIDs        uint32 // how many auxiliary gids
}

// RPCMsg is an RPC call or reply header.
type RPCMsg struct {
	XID  uint32
	Type RPCMsgType
	// A call's.
	RPCVersion, Program, ProgVersion, Procedure uint32
	Cred                                        RPCAuth
	// A call's and an accepted reply's.
	Verf RPCAuth
	// A reply's.
	ReplyStat  RPCReplyStat
	AcceptStat RPCAcceptStat
	RejectStat RPCRejectStat
	// MismatchLow and MismatchHigh are PROG_MISMATCH's or RPC_MISMATCH's
	// version range; AuthStat AUTH_ERROR's code.
	MismatchLow, MismatchHigh, AuthStat uint32
	// Body is what follows the header: a call's arguments, a reply's
	// results (accepted with SUCCESS).
	Body []byte
}

// authFields name an opaque_auth's fields, for errors.
var authFields = map[string][2]string{"cred": {"cred.flavor", "cred.length"}, "verf": {"verf.flavor", "verf.length"}}

func (r *xdrReader) auth(a *RPCAuth, field string) bool {
	names := authFields[field]
	a.Flavor = RPCAuthFlavor(r.u32(names[0]))
	body, ok := r.opaque(names[1], rpcMaxAuth)
	if !ok {
		return false
	}
	a.Body, a.Unix = body, false
	if a.Flavor == RPCAuthUnix {
		u := xdrReader{b: body}
		a.Stamp = u.u32("stamp")
		a.MachineName, _ = u.opaque("machinename", 255)
		a.UID, a.GID = u.u32("uid"), u.u32("gid")
		a.GIDs = u.u32("gids")
		a.Unix = !u.short && a.GIDs <= 16
	}
	return true
}

// DecodeFromBytes decodes an RPC message header; Body points into data.
func (m *RPCMsg) DecodeFromBytes(data []byte) error {
	*m = RPCMsg{}
	r := xdrReader{b: data}
	m.XID = r.u32("xid")
	m.Type = RPCMsgType(r.u32("msg_type"))
	malformed := func(field, detail string) error { return r.malformed("RPC", field, detail) }
	switch m.Type {
	case RPCCall:
		m.RPCVersion = r.u32("rpcvers")
		m.Program = r.u32("prog")
		m.ProgVersion = r.u32("vers")
		m.Procedure = r.u32("proc")
		if !r.short && m.RPCVersion != 2 {
			return malformed("rpcvers", "RPC version "+strconv.FormatUint(uint64(m.RPCVersion), 10)+", not 2")
		}
		if !r.auth(&m.Cred, "cred") && !r.short {
			return malformed("cred.length", "longer than 400 bytes")
		}
		if !r.auth(&m.Verf, "verf") && !r.short {
			return malformed("verf.length", "longer than 400 bytes")
		}
	case RPCReply:
		m.ReplyStat = RPCReplyStat(r.u32("reply_stat"))
		switch m.ReplyStat {
		case RPCAccepted:
			if !r.auth(&m.Verf, "verf") && !r.short {
				return malformed("verf.length", "longer than 400 bytes")
			}
			m.AcceptStat = RPCAcceptStat(r.u32("accept_stat"))
			if m.AcceptStat == RPCProgMismatch {
				m.MismatchLow, m.MismatchHigh = r.u32("mismatch_info.low"), r.u32("mismatch_info.high")
			}
		case RPCDenied:
			m.RejectStat = RPCRejectStat(r.u32("reject_stat"))
			switch m.RejectStat {
			case RPCMismatch:
				m.MismatchLow, m.MismatchHigh = r.u32("mismatch_info.low"), r.u32("mismatch_info.high")
			case RPCAuthError:
				m.AuthStat = r.u32("auth_stat")
			}
		default:
			if !r.short {
				return malformed("reply_stat", "reply state "+m.ReplyStat.String())
			}
		}
	default:
		if !r.short {
			return malformed("msg_type", "message type "+m.Type.String())
		}
	}
	if r.short {
		return r.err("RPC")
	}
	m.Body = data[r.off:]
	return nil
}

// RPC programs ibwire names (RFC 1813, RFC 8881, Linux's NFSACL).
const (
	RPCProgPortmap = 100000
	RPCProgNFS     = 100003
	RPCProgMount   = 100005
	RPCProgNLM     = 100021
	RPCProgNFSACL  = 100227
)

// RPCProgramName names an RPC program as Wireshark does ("NFS").
func RPCProgramName(prog uint32) (string, bool) {
	switch prog {
	case RPCProgPortmap:
		return "Portmap", true
	case RPCProgNFS:
		return "NFS", true
	case RPCProgMount:
		return "MOUNT", true
	case RPCProgNLM:
		return "NLM", true
	case RPCProgNFSACL:
		return "NFSACL", true
	}
	return "", false
}

// NFSv3 procedures (RFC 1813 §3.3).
var nfs3ProcNames = [...]string{"NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE",
	"CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK", "READDIR", "READDIRPLUS",
	"FSSTAT", "FSINFO", "PATHCONF", "COMMIT"}

// NFSACL v3 procedures (Linux fs/nfs_common, Wireshark's packet-nfsacl.c).
var nfsaclProcNames = [...]string{"NULL", "GETACL", "SETACL"}

// NFSv4 procedures (RFC 8881 §16).
var nfs4ProcNames = [...]string{"NULL", "COMPOUND"}

// RPCProcedureName names procedure proc of program prog, version vers:
// "READ" for NFS v3 procedure 6, "COMPOUND" for NFS v4 procedure 1.
func RPCProcedureName(prog, vers, proc uint32) (string, bool) {
	var names []string
	switch {
	case prog == RPCProgNFS && vers == 3:
		names = nfs3ProcNames[:]
	case prog == RPCProgNFS && vers == 4:
		names = nfs4ProcNames[:]
	case prog == RPCProgNFSACL && vers == 3:
		names = nfsaclProcNames[:]
	}
	if int(proc) < len(names) {
		return names[proc], true
	}
	if proc == 0 {
		return "NULL", true // procedure 0 is NULL in every ONC RPC program
	}
	return "", false
}

// NFS3Status is an NFSv3 reply's nfsstat3 (RFC 1813 §2.6).
type NFS3Status uint32

var nfs3StatusNames = map[NFS3Status]string{0: "NFS3_OK", 1: "NFS3ERR_PERM", 2: "NFS3ERR_NOENT", 5: "NFS3ERR_IO",
	6: "NFS3ERR_NXIO", 13: "NFS3ERR_ACCES", 17: "NFS3ERR_EXIST", 18: "NFS3ERR_XDEV", 19: "NFS3ERR_NODEV",
	20: "NFS3ERR_NOTDIR", 21: "NFS3ERR_ISDIR", 22: "NFS3ERR_INVAL", 27: "NFS3ERR_FBIG", 28: "NFS3ERR_NOSPC",
	30: "NFS3ERR_ROFS", 31: "NFS3ERR_MLINK", 63: "NFS3ERR_NAMETOOLONG", 66: "NFS3ERR_NOTEMPTY",
	69: "NFS3ERR_DQUOT", 70: "NFS3ERR_STALE", 71: "NFS3ERR_REMOTE", 10001: "NFS3ERR_BADHANDLE",
	10002: "NFS3ERR_NOT_SYNC", 10003: "NFS3ERR_BAD_COOKIE", 10004: "NFS3ERR_NOTSUPP", 10005: "NFS3ERR_TOOSMALL",
	10006: "NFS3ERR_SERVERFAULT", 10007: "NFS3ERR_BADTYPE", 10008: "NFS3ERR_JUKEBOX"}

// Name is the status's name, false for an unknown one.
func (s NFS3Status) Name() (string, bool) {
	n, ok := nfs3StatusNames[s]
	return n, ok
}

func (s NFS3Status) String() string {
	if n, ok := s.Name(); ok {
		return n
	}
	return enumName(nil, uint(s), "Unknown")
}

// NFS4Op is an NFSv4.x COMPOUND operation (RFC 8881 §16.2.1, RFC 7862).
type NFS4Op uint32

// nfs4OpNames are the operations of NFSv4.0 (3..39), 4.1 (40..58) and 4.2
// (59..75); 10044 is OP_ILLEGAL.
var nfs4OpNames = [...]string{3: "ACCESS", 4: "CLOSE", 5: "COMMIT", 6: "CREATE", 7: "DELEGPURGE", 8: "DELEGRETURN",
	9: "GETATTR", 10: "GETFH", 11: "LINK", 12: "LOCK", 13: "LOCKT", 14: "LOCKU", 15: "LOOKUP", 16: "LOOKUPP",
	17: "NVERIFY", 18: "OPEN", 19: "OPENATTR", 20: "OPEN_CONFIRM", 21: "OPEN_DOWNGRADE", 22: "PUTFH",
	23: "PUTPUBFH", 24: "PUTROOTFH", 25: "READ", 26: "READDIR", 27: "READLINK", 28: "REMOVE", 29: "RENAME",
	30: "RENEW", 31: "RESTOREFH", 32: "SAVEFH", 33: "SECINFO", 34: "SETATTR", 35: "SETCLIENTID",
	36: "SETCLIENTID_CONFIRM", 37: "VERIFY", 38: "WRITE", 39: "RELEASE_LOCKOWNER", 40: "BACKCHANNEL_CTL",
	41: "BIND_CONN_TO_SESSION", 42: "EXCHANGE_ID", 43: "CREATE_SESSION", 44: "DESTROY_SESSION",
	45: "FREE_STATEID", 46: "GET_DIR_DELEGATION", 47: "GETDEVICEINFO", 48: "GETDEVICELIST", 49: "LAYOUTCOMMIT",
	50: "LAYOUTGET", 51: "LAYOUTRETURN", 52: "SECINFO_NO_NAME", 53: "SEQUENCE", 54: "SET_SSV",
	55: "TEST_STATEID", 56: "WANT_DELEGATION", 57: "DESTROY_CLIENTID", 58: "RECLAIM_COMPLETE",
	59: "ALLOCATE", 60: "COPY", 61: "COPY_NOTIFY", 62: "DEALLOCATE", 63: "IO_ADVISE", 64: "LAYOUTERROR",
	65: "LAYOUTSTATS", 66: "OFFLOAD_CANCEL", 67: "OFFLOAD_STATUS", 68: "READ_PLUS", 69: "SEEK",
	70: "WRITE_SAME", 71: "CLONE", 72: "GETXATTR", 73: "SETXATTR", 74: "LISTXATTRS", 75: "REMOVEXATTR"}

// NFS4OpIllegal is OP_ILLEGAL.
const NFS4OpIllegal NFS4Op = 10044

// Operations named where something depends on which they are (RFC 8881
// §18): the file handle and session bookkeeping around a COMPOUND's work.
const (
	NFS4OpAccess    NFS4Op = 3
	NFS4OpGetAttr   NFS4Op = 9
	NFS4OpGetFH     NFS4Op = 10
	NFS4OpPutFH     NFS4Op = 22
	NFS4OpPutPubFH  NFS4Op = 23
	NFS4OpPutRootFH NFS4Op = 24
	NFS4OpRestoreFH NFS4Op = 31
	NFS4OpSaveFH    NFS4Op = 32
	NFS4OpSequence  NFS4Op = 53
)

// Name is the operation's name, false for an unknown one.
func (o NFS4Op) Name() (string, bool) {
	if int(o) < len(nfs4OpNames) && nfs4OpNames[o] != "" {
		return nfs4OpNames[o], true
	}
	if o == NFS4OpIllegal {
		return "ILLEGAL", true
	}
	return "", false
}

func (o NFS4Op) String() string {
	if n, ok := o.Name(); ok {
		return n
	}
	return enumName(nil, uint(o), "Unknown")
}

// appendXDROpaque appends a variable-length opaque: its length, then the
// bytes padded to a multiple of four.
func appendXDROpaque(b, v []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(v)))
	b = append(b, v...)
	return append(b, make([]byte, (4-len(v)%4)%4)...)
}

// appendTo appends the opaque_auth: the flavor, then Body, or for an
// AUTH_UNIX one with no Body the body made of Stamp, MachineName, UID,
// GID and GIDs auxiliary gids of 0.
func (a *RPCAuth) appendTo(b []byte) []byte {
	be := binary.BigEndian
	b = be.AppendUint32(b, uint32(a.Flavor))
	body := a.Body
	if body == nil && a.Unix {
		body = be.AppendUint32(body, a.Stamp)
		body = appendXDROpaque(body, a.MachineName)
		body = be.AppendUint32(body, a.UID)
		body = be.AppendUint32(body, a.GID)
		body = be.AppendUint32(body, a.GIDs)
		body = append(body, make([]byte, 4*a.GIDs)...)
	}
	return appendXDROpaque(b, body)
}

// AppendTo appends the RPC message header from its fields, then Body:
// what DecodeFromBytes reads back.
func (m *RPCMsg) AppendTo(b []byte) []byte {
	be := binary.BigEndian
	b = be.AppendUint32(b, m.XID)
	b = be.AppendUint32(b, uint32(m.Type))
	switch m.Type {
	case RPCCall:
		for _, v := range [...]uint32{m.RPCVersion, m.Program, m.ProgVersion, m.Procedure} {
			b = be.AppendUint32(b, v)
		}
		b = m.Cred.appendTo(b)
		b = m.Verf.appendTo(b)
	case RPCReply:
		b = be.AppendUint32(b, uint32(m.ReplyStat))
		switch m.ReplyStat {
		case RPCAccepted:
			b = m.Verf.appendTo(b)
			b = be.AppendUint32(b, uint32(m.AcceptStat))
			if m.AcceptStat == RPCProgMismatch {
				b = be.AppendUint32(b, m.MismatchLow)
				b = be.AppendUint32(b, m.MismatchHigh)
			}
		case RPCDenied:
			b = be.AppendUint32(b, uint32(m.RejectStat))
			switch m.RejectStat {
			case RPCMismatch:
				b = be.AppendUint32(b, m.MismatchLow)
				b = be.AppendUint32(b, m.MismatchHigh)
			case RPCAuthError:
				b = be.AppendUint32(b, m.AuthStat)
			}
		}
	}
	return append(b, m.Body...)
}
