package endpoint

import "fmt"

// DebugString describes a QP's requester and responder state, for test
// failure messages.
func (qp *QP) DebugString() string {
	var s string
	_ = qp.call(func() {
		r := &qp.req
		s = fmt.Sprintf("state %v req head %d next %d tail %d psn %v comp %v rdOut %d retry %d rnr %d armed %v rnrWait %v; resp psn %v nak %v inOp %v",
			qp.state, r.head, r.next, r.tail, r.psn, r.comp, r.rdOut, r.retryLeft, r.rnrLeft, r.retryArmed, r.rnrWait,
			qp.resp.psn, qp.resp.nakSent, qp.resp.inOp)
	})
	return s
}

// Footprint returns the packets waiting in the QP's inbox and the capacity
// of its responder-resource ring, for memory-bound tests.
func (qp *QP) Footprint() (inbox, resources int) {
	_ = qp.call(func() { resources = cap(qp.resp.res) })
	return len(qp.inbox), resources
}
