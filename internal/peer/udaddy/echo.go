package udaddy

import (
	"context"
	"fmt"

	"github.com/ibwire/ibwire/endpoint"
	"github.com/ibwire/ibwire/layers"
)

// echoSlots is how many datagrams the echo holds: receives posted, and
// answers in flight. A datagram that finds every answer slot busy gets
// none, as a datagram may be lost anyway.
const echoSlots = 256

// Echo is udaddy's server built to stay up, for ibpeer serve --cm: one
// UD QP answers the SIDR_REQs for the UDP port space's service ID of a
// port and echoes each datagram at once, with its length, to the address
// its GRH names and the QPN its immediate data names. udaddy's server
// answers a client once all its datagrams are in; answering each as it
// comes gives the client the same datagrams, needs no count agreed
// beforehand, and keeps no state per client.
type Echo struct {
	n       *node
	answers *endpoint.MR
	cm      *endpoint.CM
	sid     layers.ServiceID
	size    int
}

// NewEcho makes the echo's QP on dev and answers SIDR_REQs for port on cm
// from the moment it returns; Run then echoes the datagrams.
func NewEcho(dev *endpoint.Device, cm *endpoint.CM, port uint16) (*Echo, error) {
	cfg := Config{Size: 4096}
	n, err := newNode(dev, cfg, echoSlots, echoSlots)
	if err != nil {
		return nil, err
	}
	e := &Echo{n: n, cm: cm, sid: layers.IPCMServiceID(layers.PortSpaceUDP, port), size: cfg.Size}
	if e.answers, err = n.pd.RegMR(make([]byte, echoSlots*cfg.Size), endpoint.AccessLocalWrite); err != nil {
		n.destroy()
		return nil, err
	}
	if err := cm.ServeSIDR(e.sid, endpoint.SIDRService{QPN: n.qp.QPN(), QKey: endpoint.RDMAUDPQKey}); err != nil {
		n.destroy()
		return nil, err
	}
	return e, nil
}

// Run echoes datagrams until ctx ends, then stops answering SIDR_REQs and
// frees the QP. dropped says how many datagrams got no answer (not
// udaddy's: no immediate data or no GRH address; or every answer slot
// busy).
func (e *Echo) Run(ctx context.Context) (dropped int, err error) {
	n := e.n
	defer n.destroy()
	defer func() { _ = e.cm.ServeSIDR(e.sid, endpoint.SIDRService{}) }()
	free := make([]int, 0, echoSlots)
	for i := range echoSlots {
		free = append(free, i)
	}
	var wcs [16]endpoint.WC
	for {
		for k := n.scq.Poll(wcs[:]); k > 0; k = n.scq.Poll(wcs[:]) {
			for _, wc := range wcs[:k] {
				free = append(free, int(wc.ID))
			}
		}
		k := n.rcq.Poll(wcs[:])
		for _, wc := range wcs[:k] {
			if !echoOne(n, e.answers, wc, &free, e.size) {
				dropped++
			}
			if err := n.repost(int(wc.ID)); err != nil {
				return dropped, fmt.Errorf("udaddy echo: repost: %w", err)
			}
		}
		if k > 0 {
			continue
		}
		select {
		case <-n.rcq.Notify():
		case <-n.scq.Notify():
		case <-ctx.Done():
			return dropped, nil
		}
	}
}

// echoOne answers the datagram wc completed, from a free answer slot; it
// reports whether it did.
func echoOne(n *node, answers *endpoint.MR, wc endpoint.WC, free *[]int, size int) bool {
	if wc.Status != endpoint.StatusSuccess || !wc.WithImm || len(*free) == 0 {
		return false
	}
	recv := n.mr.Bytes()[int(wc.ID)*n.slot:]
	src, ok := endpoint.GRHSource(recv)
	if !ok {
		return false
	}
	length := int(wc.ByteLen) - layers.GRHLength
	slot := (*free)[len(*free)-1]
	*free = (*free)[:len(*free)-1]
	copy(answers.Bytes()[slot*size:], recv[layers.GRHLength:layers.GRHLength+length])
	wr := &endpoint.SendWR{ID: uint64(slot), Op: endpoint.WRSendWithImm, Imm: n.qp.QPN(),
		Dest: endpoint.UDDest{Addr: src, QPN: wc.Imm, QKey: endpoint.RDMAUDPQKey},
		SGL:  []endpoint.SGE{answers.SGE(slot*size, length)}}
	if err := n.qp.PostSend(wr); err != nil {
		*free = append(*free, slot)
		return false
	}
	return true
}
