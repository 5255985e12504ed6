package endpoint

// PendingPassive counts the passive connections between their REQ and
// their RTU (waiting for Accept or for the RTU), for the flood tests.
func (cm *CM) PendingPassive() int {
	var n int
	_ = cm.do(func() {
		for _, c := range cm.conns {
			if c.passive && (c.state == cmReqRcvd || c.state == cmRepSent) {
				n++
			}
		}
	})
	return n
}
