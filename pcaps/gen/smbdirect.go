package main

import (
	"time"

	"github.com/ibwire/ibwire/craft"
	"github.com/ibwire/ibwire/layers"
)

// SMB Direct ([MS-SMBD]) conversations: an SMB 3 client (the requester
// side, which connects) and server, each message an RC SEND of its own
// direction, built by two craft Conns (the server's with the endpoints
// swapped) and merged by time.

func smbDirectSpecs() []spec {
	return []spec{
		{"smbdirect", "SMB Direct over RoCEv2: CM to port 445, negotiate, SMB2 NEGOTIATE/SESSION_SETUP/TREE_CONNECT, a compound CREATE+READ whose 12 KB response is two 8 KB fragments (SEND FIRST..LAST), a WRITE answered STATUS_PENDING then SUCCESS, a keep-alive, CLOSE, an ECHO left unanswered", smbDirectConversation(true)},
		{"smbdirect_midstream", "the same SMB Direct conversation captured from after its CM set-up and negotiate: found by content", smbDirectConversation(false)},
	}
}

// smbStep is one SMB Direct message of the conversation.
type smbStep struct {
	server bool
	msg    layers.SMBDirectMsg
}

// smb2Msg is an SMB2 message: headers chained as a compound, each followed
// by body bytes (a pattern: the SMB2 bodies are not what is tested).
func smb2Msg(parts ...smb2Part) []byte {
	var out []byte
	for i, p := range parts {
		start := len(out)
		h := p.h
		body := craft.Pattern(p.body, byte(h.Command))
		if i < len(parts)-1 {
			h.NextCommand = uint32((layers.SMB2HeaderLen + p.body + 7) &^ 7)
		}
		out = layers.AppendSMB2Header(out, &h)
		out = append(out, body...)
		if i < len(parts)-1 {
			for len(out)-start < int(h.NextCommand) {
				out = append(out, 0)
			}
		}
	}
	return out
}

type smb2Part struct {
	h    layers.SMB2Header
	body int
}

func smbReq(cmd layers.SMB2Command, id uint64, body int) smb2Part {
	return smb2Part{h: layers.SMB2Header{Command: cmd, MessageID: id, Credits: 16, TreeID: 1, SessionID: 0x4400000000001}, body: body}
}

func smbRsp(cmd layers.SMB2Command, id uint64, status uint32, body int) smb2Part {
	return smb2Part{h: layers.SMB2Header{Command: cmd, MessageID: id, Status: status, Credits: 16, Flags: layers.SMB2FlagServerToRedir,
		TreeID: 1, SessionID: 0x4400000000001}, body: body}
}

// smbData makes the Data Transfers that carry data, in fragments of at
// most maxData bytes.
func smbData(server bool, data []byte, maxData int) []smbStep {
	var steps []smbStep
	for off := 0; off < len(data); off += maxData {
		end := min(off+maxData, len(data))
		steps = append(steps, smbStep{server: server, msg: layers.SMBDirectMsg{Kind: layers.SMBDirectDataTransfer,
			CreditsRequested: 255, CreditsGranted: 1, RemainingLength: uint32(len(data) - end), Data: data[off:end]}})
	}
	return steps
}

func smbDirectConversation(withSetup bool) func() (craft.Encap, craft.Trace, []string, error) {
	return func() (craft.Encap, craft.Trace, []string, error) {
		const (
			maxRecv = 8192
			maxData = maxRecv - 24
		)
		const (
			cmdNegotiate, cmdSessionSetup, cmdTreeConnect   = layers.SMB2Negotiate, layers.SMB2SessionSetup, layers.SMB2TreeConnect
			cmdCreate, cmdClose, cmdRead, cmdWrite, cmdEcho = layers.SMB2Create, layers.SMB2Close, layers.SMB2Read, layers.SMB2Write, layers.SMB2Echo
			success, pending, moreProcessing                = 0x00000000, layers.NTStatusPending, layers.NTStatusMoreProcessingRequired
		)
		var steps []smbStep
		if withSetup {
			steps = append(steps,
				smbStep{msg: layers.SMBDirectMsg{Kind: layers.SMBDirectNegotiateRequest, MinVersion: layers.SMBDirectVersion1, MaxVersion: layers.SMBDirectVersion1,
					CreditsRequested: 255, PreferredSendSize: maxRecv, MaxReceiveSize: maxRecv, MaxFragmentedSize: 1 << 20}},
				smbStep{server: true, msg: layers.SMBDirectMsg{Kind: layers.SMBDirectNegotiateResponse, MinVersion: layers.SMBDirectVersion1,
					MaxVersion: layers.SMBDirectVersion1, NegotiatedVersion: layers.SMBDirectVersion1, CreditsRequested: 255, CreditsGranted: 255,
					MaxReadWriteSize: 1 << 20, PreferredSendSize: maxRecv, MaxReceiveSize: maxRecv, MaxFragmentedSize: 1 << 20}})
			steps = append(steps, smbData(false, smb2Msg(smbReq(cmdNegotiate, 0, 36)), maxData)...)
			steps = append(steps, smbData(true, smb2Msg(smbRsp(cmdNegotiate, 0, success, 128)), maxData)...)
		}
		steps = append(steps, smbData(false, smb2Msg(smbReq(cmdSessionSetup, 1, 88)), maxData)...)
		steps = append(steps, smbData(true, smb2Msg(smbRsp(cmdSessionSetup, 1, moreProcessing, 200)), maxData)...)
		steps = append(steps, smbData(false, smb2Msg(smbReq(cmdSessionSetup, 2, 300)), maxData)...)
		steps = append(steps, smbData(true, smb2Msg(smbRsp(cmdSessionSetup, 2, success, 16)), maxData)...)
		steps = append(steps, smbData(false, smb2Msg(smbReq(cmdTreeConnect, 3, 40)), maxData)...)
		steps = append(steps, smbData(true, smb2Msg(smbRsp(cmdTreeConnect, 3, success, 16)), maxData)...)
		steps = append(steps, smbData(false, smb2Msg(smbReq(cmdCreate, 4, 120), smbReq(cmdRead, 5, 48)), maxData)...)
		steps = append(steps, smbData(true, smb2Msg(smbRsp(cmdCreate, 4, success, 88), smbRsp(cmdRead, 5, success, 12000)), maxData)...)
		steps = append(steps, smbData(false, smb2Msg(smbReq(cmdWrite, 6, 560)), maxData)...)
		steps = append(steps, smbData(true, smb2Msg(smbRsp(cmdWrite, 6, pending, 8)), maxData)...)
		steps = append(steps, smbData(true, smb2Msg(smbRsp(cmdWrite, 6, success, 16)), maxData)...)
		steps = append(steps,
			smbStep{msg: layers.SMBDirectMsg{Kind: layers.SMBDirectDataTransfer, CreditsRequested: 255, CreditsGranted: 1, Flags: layers.SMBDirectResponseRequested}},
			smbStep{server: true, msg: layers.SMBDirectMsg{Kind: layers.SMBDirectDataTransfer, CreditsRequested: 255, CreditsGranted: 8}})
		steps = append(steps, smbData(false, smb2Msg(smbReq(cmdClose, 7, 24)), maxData)...)
		steps = append(steps, smbData(true, smb2Msg(smbRsp(cmdClose, 7, success, 60)), maxData)...)
		steps = append(steps, smbData(false, smb2Msg(smbReq(cmdEcho, 8, 4)), maxData)...)

		client := newConn(craft.Config{})
		cfg := client.Config()
		server := newConn(craft.Config{Requester: cfg.Responder, Responder: cfg.Requester})
		if withSetup {
			sid := layers.IPCMServiceID(layers.PortSpaceTCP, layers.SMBDirectPort)
			if err := client.Connect(craft.CMOptions{ServiceID: sid}); err != nil {
				return 0, craft.Trace{}, nil, err
			}
		}
		at := client.Now()
		for i, st := range steps {
			c := client
			if st.server {
				c = server
			}
			c.Wait(at.Sub(c.Now()))
			sent := len(c.Frames()) + 1
			if err := c.Run([]craft.Op{{Kind: craft.OpSend, Data: layers.AppendSMBDirect(nil, &st.msg), Wait: true}}, craft.Faults{}); err != nil {
				return 0, craft.Trace{}, nil, err
			}
			if i == len(steps)-1 { // the ECHO nothing answers
				if err := c.Expect(craft.Finding{Frame: sent, Kind: craft.FindingSMB2NoResponse, Detail: "ECHO id 8, the capture ends before its response"}); err != nil {
					return 0, craft.Trace{}, nil, err
				}
			}
			at = c.Now().Add(20 * time.Microsecond)
		}
		return craft.RoCEv2, craft.Merge(client.Trace(), server.Trace()), nil, nil
	}
}
