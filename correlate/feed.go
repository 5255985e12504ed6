package correlate

// feed reads one point's capture on a goroutine of its own, a batch of
// sightings ahead, so that decoding the points' captures runs on several
// cores while the matcher merges them. Its memory is a fixed number of
// batches.
type feed struct {
	out    chan *batch
	free   chan *batch
	cur    *batch
	at     int
	exited chan struct{}
}

type batch struct {
	s     []sighting
	arena []byte // the frames' bytes, when the source keeps them
	err   error  // set on the last batch: io.EOF or what ended the capture
}

const (
	feedBatches = 6
	batchSize   = 512
)

// startFeed starts reading src; closing done stops it.
func startFeed(src *source, done <-chan struct{}) *feed {
	f := &feed{out: make(chan *batch, feedBatches), free: make(chan *batch, feedBatches), exited: make(chan struct{})}
	for i := 0; i < feedBatches; i++ {
		f.free <- &batch{s: make([]sighting, 0, batchSize)}
	}
	go func() {
		defer close(f.exited)
		for {
			var b *batch
			select {
			case b = <-f.free:
			case <-done:
				return
			}
			b.s, b.err, b.arena = b.s[:0], nil, b.arena[:0]
			src.arena = &b.arena
			for len(b.s) < cap(b.s) {
				b.s = b.s[:len(b.s)+1]
				if err := src.next(&b.s[len(b.s)-1]); err != nil {
					b.s, b.err = b.s[:len(b.s)-1], err
					break
				}
			}
			select {
			case f.out <- b:
			case <-done:
				return
			}
			if b.err != nil {
				return
			}
		}
	}()
	return f
}

// next yields the next sighting, valid until the call after, or the error
// that ended the capture.
func (f *feed) next() (*sighting, error) {
	for f.cur == nil || f.at == len(f.cur.s) {
		if f.cur != nil {
			if f.cur.err != nil {
				return nil, f.cur.err
			}
			f.free <- f.cur
		}
		f.cur, f.at = <-f.out, 0
	}
	f.at++
	return &f.cur.s[f.at-1], nil
}
