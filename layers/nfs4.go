package layers

// NFSv4.x COMPOUND (RFC 7530 §16, RFC 8881 §18 and §16.2, RFC 7862 §15):
// ibwire reads the operations of a call and the operation results of a
// reply, not the arguments and results themselves. XDR has no lengths to
// skip by, so each operation's arguments and each result are walked by
// their shape (the xdr* skippers below), enough to find the next one.

// NFS4Compound is what ibwire reads of a COMPOUND call's arguments: its
// tag, minor version and the operations, in order. To find the next
// operation it skips each one's arguments by their shape; at an operation
// whose shape it does not know (a pNFS layout's, a 4.2 copy's) it stops:
// Ops then lists the operations up to it, and Partial says the list goes
// on.
type NFS4Compound struct {
	Tag          []byte
	MinorVersion uint32
	Count        uint32 // the operations the COMPOUND says it has
	Ops          [NFS4MaxOps]NFS4Op
	NOps         int
	Partial      bool
}

// NFS4CompoundRes is what ibwire reads of a COMPOUND reply's results: the
// COMPOUND's status and tag, and each operation with its status, walked
// as NFS4Compound walks a call's.
type NFS4CompoundRes struct {
	Status   NFS4Status
	Tag      []byte
	Count    uint32 // the results the reply says it has
	Ops      [NFS4MaxOps]NFS4Op
	Statuses [NFS4MaxOps]NFS4Status
	NOps     int
	Partial  bool
}

// NFS4Status is an nfsstat4 (RFC 8881 §15.1).
type NFS4Status uint32

var nfs4StatusNames = map[NFS4Status]string{0: "NFS4_OK", 1: "NFS4ERR_PERM", 2: "NFS4ERR_NOENT", 5: "NFS4ERR_IO",
	6: "NFS4ERR_NXIO", 13: "NFS4ERR_ACCESS", 17: "NFS4ERR_EXIST", 18: "NFS4ERR_XDEV", 20: "NFS4ERR_NOTDIR",
	21: "NFS4ERR_ISDIR", 22: "NFS4ERR_INVAL", 27: "NFS4ERR_FBIG", 28: "NFS4ERR_NOSPC", 30: "NFS4ERR_ROFS",
	31: "NFS4ERR_MLINK", 63: "NFS4ERR_NAMETOOLONG", 66: "NFS4ERR_NOTEMPTY", 69: "NFS4ERR_DQUOT", 70: "NFS4ERR_STALE",
	10001: "NFS4ERR_BADHANDLE", 10003: "NFS4ERR_BAD_COOKIE", 10004: "NFS4ERR_NOTSUPP", 10005: "NFS4ERR_TOOSMALL",
	10006: "NFS4ERR_SERVERFAULT", 10007: "NFS4ERR_BADTYPE", 10008: "NFS4ERR_DELAY", 10009: "NFS4ERR_SAME",
	10010: "NFS4ERR_DENIED", 10011: "NFS4ERR_EXPIRED", 10012: "NFS4ERR_LOCKED", 10013: "NFS4ERR_GRACE",
	10014: "NFS4ERR_FHEXPIRED", 10015: "NFS4ERR_SHARE_DENIED", 10016: "NFS4ERR_WRONGSEC", 10017: "NFS4ERR_CLID_INUSE",
	10018: "NFS4ERR_RESOURCE", 10019: "NFS4ERR_MOVED", 10020: "NFS4ERR_NOFILEHANDLE", 10021: "NFS4ERR_MINOR_VERS_MISMATCH",
	10022: "NFS4ERR_STALE_CLIENTID", 10023: "NFS4ERR_STALE_STATEID", 10024: "NFS4ERR_OLD_STATEID",
	10025: "NFS4ERR_BAD_STATEID", 10026: "NFS4ERR_BAD_SEQID", 10027: "NFS4ERR_NOT_SAME", 10028: "NFS4ERR_LOCK_RANGE",
	10029: "NFS4ERR_SYMLINK", 10030: "NFS4ERR_RESTOREFH", 10031: "NFS4ERR_LEASE_MOVED", 10032: "NFS4ERR_ATTRNOTSUPP",
	10033: "NFS4ERR_NO_GRACE", 10034: "NFS4ERR_RECLAIM_BAD", 10035: "NFS4ERR_RECLAIM_CONFLICT", 10036: "NFS4ERR_BADXDR",
	10037: "NFS4ERR_LOCKS_HELD", 10038: "NFS4ERR_OPENMODE", 10039: "NFS4ERR_BADOWNER", 10040: "NFS4ERR_BADCHAR",
	10041: "NFS4ERR_BADNAME", 10042: "NFS4ERR_BAD_RANGE", 10043: "NFS4ERR_LOCK_NOTSUPP", 10044: "NFS4ERR_OP_ILLEGAL",
	10045: "NFS4ERR_DEADLOCK", 10046: "NFS4ERR_FILE_OPEN", 10047: "NFS4ERR_ADMIN_REVOKED", 10048: "NFS4ERR_CB_PATH_DOWN",
	10049: "NFS4ERR_BADIOMODE", 10050: "NFS4ERR_BADLAYOUT", 10051: "NFS4ERR_BAD_SESSION_DIGEST",
	10052: "NFS4ERR_BADSESSION", 10053: "NFS4ERR_BADSLOT", 10054: "NFS4ERR_COMPLETE_ALREADY",
	10055: "NFS4ERR_CONN_NOT_BOUND_TO_SESSION", 10056: "NFS4ERR_DELEG_ALREADY_WANTED", 10057: "NFS4ERR_BACK_CHAN_BUSY",
	10058: "NFS4ERR_LAYOUTTRYLATER", 10059: "NFS4ERR_LAYOUTUNAVAILABLE", 10060: "NFS4ERR_NOMATCHING_LAYOUT",
	10061: "NFS4ERR_RECALLCONFLICT", 10062: "NFS4ERR_UNKNOWN_LAYOUTTYPE", 10063: "NFS4ERR_SEQ_MISORDERED",
	10064: "NFS4ERR_SEQUENCE_POS", 10065: "NFS4ERR_REQ_TOO_BIG", 10066: "NFS4ERR_REP_TOO_BIG",
	10067: "NFS4ERR_REP_TOO_BIG_TO_CACHE", 10068: "NFS4ERR_RETRY_UNCACHED_REP", 10069: "NFS4ERR_UNSAFE_COMPOUND",
	10070: "NFS4ERR_TOO_MANY_OPS", 10071: "NFS4ERR_OP_NOT_IN_SESSION", 10072: "NFS4ERR_HASH_ALG_UNSUPP",
	10074: "NFS4ERR_CLIENTID_BUSY", 10075: "NFS4ERR_PNFS_IO_HOLE", 10076: "NFS4ERR_SEQ_FALSE_RETRY",
	10077: "NFS4ERR_BAD_HIGH_SLOT", 10078: "NFS4ERR_DEADSESSION", 10079: "NFS4ERR_ENCR_ALG_UNSUPP",
	10080: "NFS4ERR_PNFS_NO_LAYOUT", 10081: "NFS4ERR_NOT_ONLY_OP", 10082: "NFS4ERR_WRONG_CRED",
	10083: "NFS4ERR_WRONG_TYPE", 10084: "NFS4ERR_DIRDELEG_UNAVAIL", 10085: "NFS4ERR_REJECT_DELEG",
	10086: "NFS4ERR_RETURNCONFLICT", 10087: "NFS4ERR_DELEG_REVOKED"}

// Name is the status's name, false for an unknown one.
func (s NFS4Status) Name() (string, bool) {
	n, ok := nfs4StatusNames[s]
	return n, ok
}

func (s NFS4Status) String() string {
	if n, ok := s.Name(); ok {
		return n
	}
	return enumName(nil, uint(s), "Unknown")
}

// NFS4MaxOps bounds the operations NFS4Compound and NFS4CompoundRes list.
const NFS4MaxOps = 16

// nfs4MaxTag bounds a COMPOUND's tag.
const nfs4MaxTag = 1024

// The XDR shapes of NFSv4 (RFC 8881 §3.3), each skipped whole.

func (r *xdrReader) skip(n int) {
	if r.short {
		return
	}
	if len(r.b)-r.off < n {
		r.short, r.field = true, "NFSv4"
		return
	}
	r.off += n
}

// xdrOpaque skips a variable-length opaque or string.
func (r *xdrReader) xdrOpaque() {
	if _, ok := r.opaque("opaque", 1<<30); !ok {
		r.short = true
	}
}

// bitmap4 skips a bitmap4: a count of words, then the words.
func (r *xdrReader) bitmap4() {
	n := r.u32("bitmap4")
	if n > 64 {
		r.short = true
		return
	}
	r.skip(4 * int(n))
}

// fattr4 skips a fattr4: the bitmap4, then the attributes' opaque.
func (r *xdrReader) fattr4() {
	r.bitmap4()
	r.xdrOpaque()
}

// The items of the counted arrays array skips.
const (
	xdrItemWord     = iota // a 4-byte item
	xdrItemStateID         // a stateid4
	xdrItemOpaque          // an opaque or string
	xdrItemImplID          // an nfs_impl_id4
	xdrItemSecParms        // a callback_sec_parms4
	xdrItemSecinfo         // a secinfo4
)

// array skips a counted array of items of one kind (no function value:
// the reader stays on the caller's stack).
func (r *xdrReader) array(item int) {
	n := r.u32("array")
	if int64(n)*4 > int64(len(r.b)-r.off) {
		r.short = true // each item takes a word at least
		return
	}
	for i := uint32(0); i < n && !r.short; i++ {
		switch item {
		case xdrItemWord:
			r.skip(4)
		case xdrItemStateID:
			r.skip(xdrStateID)
		case xdrItemOpaque:
			r.xdrOpaque()
		case xdrItemImplID:
			r.implID4()
		case xdrItemSecParms:
			r.callbackSecParms4()
		case xdrItemSecinfo:
			if r.u32("flavor") == 6 { // RPCSEC_GSS: oid, qop, service
				r.xdrOpaque()
				r.skip(8)
			}
		}
	}
}

// stateid4 is 16 bytes (seqid, other), a verifier4 8, a sessionid4 16,
// a change_info4 20 (atomic, before, after).
const (
	xdrStateID    = 16
	xdrVerifier   = 8
	xdrSessionID  = 16
	xdrChangeInfo = 20
)

// owner4 skips an open_owner4 or lock_owner4: a clientid, an opaque.
func (r *xdrReader) owner4() {
	r.skip(8)
	r.xdrOpaque()
}

// channelAttrs4 skips a channel_attrs4: six counts and rdma_ird<1>.
func (r *xdrReader) channelAttrs4() {
	r.skip(6 * 4)
	r.array(xdrItemWord)
}

// stateProtectOps4 skips a state_protect_ops4: two bitmaps.
func (r *xdrReader) stateProtectOps4() {
	r.bitmap4()
	r.bitmap4()
}

// implID4 skips an nfs_impl_id4: domain, name, date (an nfstime4).
func (r *xdrReader) implID4() {
	r.xdrOpaque()
	r.xdrOpaque()
	r.skip(12)
}

// callbackSecParms4 skips a callback_sec_parms4: AUTH_NONE, AUTH_SYS's
// authsys_parms or RPCSEC_GSS's handles.
func (r *xdrReader) callbackSecParms4() {
	switch r.u32("cb_secflavor") {
	case 0:
	case 1:
		r.skip(4)
		r.xdrOpaque()
		r.skip(8)
		r.array(xdrItemWord)
	case 6:
		r.skip(4)
		r.xdrOpaque()
		r.xdrOpaque()
	default:
		r.short = true
	}
}

// nfsace4 skips an ACE: type, flag, access mask, who.
func (r *xdrReader) nfsace4() {
	r.skip(12)
	r.xdrOpaque()
}

// nfs4Args skips an operation's arguments (RFC 8881 §18, RFC 7862 §15).
func (r *xdrReader) nfs4Args(op NFS4Op) bool {
	switch op {
	case 3: // ACCESS: access
		r.skip(4)
	case 4: // CLOSE: seqid, open_stateid
		r.skip(4 + xdrStateID)
	case 5: // COMMIT: offset, count
		r.skip(8 + 4)
	case 6: // CREATE: objtype, objname, createattrs
		switch r.u32("objtype") {
		case 5: // NF4LNK: linkdata
			r.xdrOpaque()
		case 3, 4: // NF4BLK, NF4CHR: specdata
			r.skip(8)
		}
		r.xdrOpaque()
		r.fattr4()
	case 7: // DELEGPURGE: clientid
		r.skip(8)
	case 8: // DELEGRETURN: deleg_stateid
		r.skip(xdrStateID)
	case 9: // GETATTR: attr_request
		r.bitmap4()
	case 10: // GETFH
	case 11: // LINK: newname
		r.xdrOpaque()
	case 12: // LOCK: locktype, reclaim, offset, length, locker
		r.skip(4 + 4 + 8 + 8)
		if r.u32("new_lock_owner") != 0 {
			r.skip(4 + xdrStateID + 4) // open_seqid, open_stateid, lock_seqid
			r.owner4()
		} else {
			r.skip(xdrStateID + 4) // lock_stateid, lock_seqid
		}
	case 13: // LOCKT: locktype, offset, length, owner
		r.skip(4 + 8 + 8)
		r.owner4()
	case 14: // LOCKU
		r.skip(4 + 4 + xdrStateID + 8 + 8)
	case 15: // LOOKUP: objname
		r.xdrOpaque()
	case 16: // LOOKUPP
	case 17: // NVERIFY: obj_attributes
		r.fattr4()
	case 18: // OPEN: seqid, share_access, share_deny, owner, openhow, claim
		r.skip(12)
		r.owner4()
		if r.u32("opentype") == 1 { // OPEN4_CREATE: createhow4
			switch r.u32("createmode") {
			case 0, 1: // UNCHECKED4, GUARDED4: createattrs
				r.fattr4()
			case 2: // EXCLUSIVE4: createverf
				r.skip(xdrVerifier)
			case 3: // EXCLUSIVE4_1: createverf, attrs
				r.skip(xdrVerifier)
				r.fattr4()
			default:
				r.short = true
			}
		}
		switch r.u32("claim") {
		case 0, 3: // CLAIM_NULL: file; CLAIM_DELEGATE_PREV: file_delegate_prev
			r.xdrOpaque()
		case 1: // CLAIM_PREVIOUS: delegate_type
			r.skip(4)
		case 2: // CLAIM_DELEGATE_CUR: delegate_stateid, file
			r.skip(xdrStateID)
			r.xdrOpaque()
		case 4, 6: // CLAIM_FH, CLAIM_DELEG_PREV_FH
		case 5: // CLAIM_DELEG_CUR_FH: oc_delegate_stateid
			r.skip(xdrStateID)
		default:
			r.short = true
		}
	case 19: // OPENATTR: createdir
		r.skip(4)
	case 20: // OPEN_CONFIRM
		r.skip(xdrStateID + 4)
	case 21: // OPEN_DOWNGRADE
		r.skip(xdrStateID + 4*3)
	case 22: // PUTFH: object
		r.xdrOpaque()
	case 23: // PUTPUBFH
	case 24: // PUTROOTFH
	case 25: // READ: stateid, offset, count
		r.skip(xdrStateID + 8 + 4)
	case 26: // READDIR
		r.skip(8 + xdrVerifier + 4 + 4)
		r.bitmap4()
	case 27: // READLINK
	case 28: // REMOVE: target
		r.xdrOpaque()
	case 29: // RENAME: oldname, newname
		r.xdrOpaque()
		r.xdrOpaque()
	case 30: // RENEW: clientid
		r.skip(8)
	case 31: // RESTOREFH
	case 32: // SAVEFH
	case 33: // SECINFO: name
		r.xdrOpaque()
	case 34: // SETATTR
		r.skip(xdrStateID)
		r.fattr4()
	case 35: // SETCLIENTID: client (verifier, id), callback (program, netid, addr), ident
		r.skip(xdrVerifier)
		r.xdrOpaque()
		r.skip(4)
		r.xdrOpaque()
		r.xdrOpaque()
		r.skip(4)
	case 36: // SETCLIENTID_CONFIRM
		r.skip(8 + xdrVerifier)
	case 37: // VERIFY
		r.fattr4()
	case 38: // WRITE: stateid, offset, stable, data
		r.skip(xdrStateID + 8 + 4)
		r.xdrOpaque()
	case 39: // RELEASE_LOCKOWNER
		r.owner4()
	case 40: // BACKCHANNEL_CTL
		r.skip(4)
		r.array(xdrItemSecParms)
	case 41: // BIND_CONN_TO_SESSION
		r.skip(xdrSessionID + 4 + 4)
	case 42: // EXCHANGE_ID: clientowner, flags, state_protect, client_impl_id
		r.skip(xdrVerifier)
		r.xdrOpaque()
		r.skip(4)
		switch r.u32("spa_how") {
		case 0: // SP4_NONE
		case 1: // SP4_MACH_CRED
			r.stateProtectOps4()
		case 2: // SP4_SSV
			r.stateProtectOps4()
			r.array(xdrItemOpaque) // hash algs
			r.array(xdrItemOpaque) // encr algs
			r.skip(8)              // window, num_gss_handles
		default:
			r.short = true
		}
		r.array(xdrItemImplID)
	case 43: // CREATE_SESSION
		r.skip(8 + 4 + 4) // clientid, sequence, flags
		r.channelAttrs4()
		r.channelAttrs4()
		r.skip(4) // cb_program
		r.array(xdrItemSecParms)
	case 44: // DESTROY_SESSION
		r.skip(xdrSessionID)
	case 45: // FREE_STATEID
		r.skip(xdrStateID)
	case 46: // GET_DIR_DELEGATION: signal, notification types, two attr_notice4 (nfstime4), two attribute bitmaps
		r.skip(4)
		r.bitmap4()
		r.skip(12 + 12)
		r.bitmap4()
		r.bitmap4()
	case 47: // GETDEVICEINFO
		r.skip(16 + 4 + 4)
		r.bitmap4()
	case 50: // LAYOUTGET
		r.skip(4 + 4 + 4 + 8 + 8 + 8 + xdrStateID + 4)
	case 52: // SECINFO_NO_NAME: style
		r.skip(4)
	case 53: // SEQUENCE
		r.skip(xdrSessionID + 4 + 4 + 4 + 4)
	case 55: // TEST_STATEID
		r.array(xdrItemStateID)
	case 57: // DESTROY_CLIENTID
		r.skip(8)
	case 58: // RECLAIM_COMPLETE: one_fs
		r.skip(4)
	case 59: // ALLOCATE
		r.skip(xdrStateID + 8 + 8)
	case 62: // DEALLOCATE
		r.skip(xdrStateID + 8 + 8)
	case 69: // SEEK
		r.skip(xdrStateID + 8 + 4)
	case 71: // CLONE
		r.skip(2*xdrStateID + 8 + 8 + 8)
	case NFS4OpIllegal:
	default:
		return false
	}
	return true
}

// nfs4Result skips an operation's result when its status is NFS4_OK
// (RFC 8881 §18): on an error every result is void but LOCK's and LOCKT's
// (LOCK4denied) and SETCLIENTID's, and an error ends the COMPOUND anyway.
func (r *xdrReader) nfs4Result(op NFS4Op) bool {
	switch op {
	case 3: // ACCESS: supported, access
		r.skip(8)
	case 4: // CLOSE: open_stateid
		r.skip(xdrStateID)
	case 5: // COMMIT: writeverf
		r.skip(xdrVerifier)
	case 6: // CREATE: cinfo, attrset
		r.skip(xdrChangeInfo)
		r.bitmap4()
	case 7: // DELEGPURGE
	case 8: // DELEGRETURN
	case 9: // GETATTR: obj_attributes
		r.fattr4()
	case 10: // GETFH: object
		r.xdrOpaque()
	case 11: // LINK: cinfo
		r.skip(xdrChangeInfo)
	case 12: // LOCK: lock_stateid
		r.skip(xdrStateID)
	case 13: // LOCKT
	case 14: // LOCKU: lock_stateid
		r.skip(xdrStateID)
	case 15: // LOOKUP
	case 16: // LOOKUPP
	case 17: // NVERIFY
	case 18: // OPEN: stateid, cinfo, rflags, attrset, delegation
		r.skip(xdrStateID + xdrChangeInfo + 4)
		r.bitmap4()
		switch r.u32("delegation_type") {
		case 0: // OPEN_DELEGATE_NONE
		case 1: // OPEN_DELEGATE_READ: stateid, recall, permissions
			r.skip(xdrStateID + 4)
			r.nfsace4()
		case 2: // OPEN_DELEGATE_WRITE: stateid, recall, space_limit, permissions
			r.skip(xdrStateID + 4)
			switch r.u32("limitby") {
			case 1: // NFS_LIMIT_SIZE: filesize
				r.skip(8)
			case 2: // NFS_LIMIT_BLOCKS: num_blocks, bytes_per_block
				r.skip(8)
			default:
				r.short = true
			}
			r.nfsace4()
		case 3: // OPEN_DELEGATE_NONE_EXT: why, and for two whys a flag
			if why := r.u32("ond_why"); why == 1 || why == 2 {
				r.skip(4)
			}
		default:
			r.short = true
		}
	case 19: // OPENATTR
	case 20: // OPEN_CONFIRM
		r.skip(xdrStateID)
	case 21: // OPEN_DOWNGRADE
		r.skip(xdrStateID)
	case 22: // PUTFH
	case 23: // PUTPUBFH
	case 24: // PUTROOTFH
	case 25: // READ: eof, data
		r.skip(4)
		r.xdrOpaque()
	case 26: // READDIR: cookieverf, entries, eof
		r.skip(xdrVerifier)
		for i := 0; r.u32("value_follows") != 0 && !r.short; i++ {
			if i > 1<<16 {
				r.short = true
				break
			}
			r.skip(8) // cookie
			r.xdrOpaque()
			r.fattr4()
		}
		r.skip(4)
	case 27: // READLINK: link
		r.xdrOpaque()
	case 28: // REMOVE: cinfo
		r.skip(xdrChangeInfo)
	case 29: // RENAME: source_cinfo, target_cinfo
		r.skip(2 * xdrChangeInfo)
	case 30: // RENEW
	case 31: // RESTOREFH
	case 32: // SAVEFH
	case 33: // SECINFO
		r.array(xdrItemSecinfo)
	case 34: // SETATTR: attrsset
		r.bitmap4()
	case 35: // SETCLIENTID: clientid, confirm
		r.skip(8 + xdrVerifier)
	case 36: // SETCLIENTID_CONFIRM
	case 37: // VERIFY
	case 38: // WRITE: count, committed, writeverf
		r.skip(4 + 4 + xdrVerifier)
	case 39: // RELEASE_LOCKOWNER
	case 40: // BACKCHANNEL_CTL
	case 41: // BIND_CONN_TO_SESSION
		r.skip(xdrSessionID + 4 + 4)
	case 42: // EXCHANGE_ID
		r.skip(8 + 4 + 4) // clientid, sequenceid, flags
		switch r.u32("spr_how") {
		case 0:
		case 1:
			r.stateProtectOps4()
		case 2: // ssv_prot_info4
			r.stateProtectOps4()
			r.skip(4 * 4) // hash_alg, encr_alg, ssv_len, window
			r.array(xdrItemOpaque)
		default:
			r.short = true
		}
		r.skip(8) // server_owner.minor_id
		r.xdrOpaque()
		r.xdrOpaque() // server_scope
		r.array(xdrItemImplID)
	case 43: // CREATE_SESSION: sessionid, sequence, flags, fore and back channel attrs
		r.skip(xdrSessionID + 4 + 4)
		r.channelAttrs4()
		r.channelAttrs4()
	case 44: // DESTROY_SESSION
	case 45: // FREE_STATEID
	case 52: // SECINFO_NO_NAME
		r.array(xdrItemSecinfo)
	case 53: // SEQUENCE
		r.skip(xdrSessionID + 4*5)
	case 55: // TEST_STATEID: status_codes
		r.array(xdrItemWord)
	case 57: // DESTROY_CLIENTID
	case 58: // RECLAIM_COMPLETE
	case 59: // ALLOCATE
	case 62: // DEALLOCATE
	case 69: // SEEK: eof, offset
		r.skip(4 + 8)
	case 71: // CLONE
	case NFS4OpIllegal:
	default:
		return false
	}
	return true
}

// nfs4Tag reads a COMPOUND's tag, which opens its arguments and follows
// its reply's status.
func (r *xdrReader) nfs4Tag() ([]byte, error) {
	tag, ok := r.opaque("tag", nfs4MaxTag)
	if !ok {
		if r.short {
			return nil, r.err("NFS")
		}
		return nil, &DecodeError{Layer: "NFS", Field: "tag", Err: ErrMalformed, Detail: "longer than 1024 bytes"}
	}
	return tag, nil
}

// DecodeFromBytes reads a COMPOUND call's arguments (an RPC call's Body).
func (c *NFS4Compound) DecodeFromBytes(data []byte) error {
	*c = NFS4Compound{}
	r := xdrReader{b: data}
	tag, err := r.nfs4Tag()
	if err != nil {
		return err
	}
	c.Tag = tag
	c.MinorVersion = r.u32("minorversion")
	c.Count = r.u32("argarray")
	if r.short {
		return r.err("NFS")
	}
	for i := uint32(0); i < c.Count; i++ {
		op := NFS4Op(r.u32("argop"))
		if r.short || c.NOps == NFS4MaxOps {
			c.Partial = true
			return nil
		}
		c.Ops[c.NOps] = op
		c.NOps++
		if !r.nfs4Args(op) || r.short {
			c.Partial = i+1 < c.Count
			return nil
		}
	}
	return nil
}

// DecodeFromBytes reads a COMPOUND reply's results (an accepted RPC
// reply's Body). An operation whose result ibwire cannot walk (it does
// not know the shape, or the data ran out: a READ whose data came by a
// write chunk has its length inline and not its bytes) ends the list,
// with Partial set when the reply says more follow.
func (c *NFS4CompoundRes) DecodeFromBytes(data []byte) error {
	*c = NFS4CompoundRes{}
	r := xdrReader{b: data}
	c.Status = NFS4Status(r.u32("status"))
	tag, err := r.nfs4Tag()
	if err != nil {
		return err
	}
	c.Tag = tag
	c.Count = r.u32("resarray")
	if r.short {
		return r.err("NFS")
	}
	for i := uint32(0); i < c.Count; i++ {
		op := NFS4Op(r.u32("resop"))
		st := NFS4Status(r.u32("status"))
		if r.short || c.NOps == NFS4MaxOps {
			c.Partial = true
			return nil
		}
		c.Ops[c.NOps], c.Statuses[c.NOps] = op, st
		c.NOps++
		if st != 0 {
			c.Partial = i+1 < c.Count
			return nil // an error ends the COMPOUND (RFC 8881 §16.2.3)
		}
		if !r.nfs4Result(op) || r.short {
			c.Partial = i+1 < c.Count
			return nil
		}
	}
	return nil
}
