package tui

// chunked is an append-only list stored in fixed-size chunks: growing it
// never copies what it holds, so a million-entry index costs its size and
// not twice that while a slice doubles.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkLen = 1 << 16

func (c *chunked[T]) append(vs ...T) {
	for len(vs) > 0 {
		if c.n%chunkLen == 0 {
			c.chunks = append(c.chunks, make([]T, 0, chunkLen))
		}
		last := &c.chunks[len(c.chunks)-1]
		k := min(len(vs), chunkLen-len(*last))
		*last = append(*last, vs[:k]...)
		vs = vs[k:]
		c.n += k
	}
}

func (c *chunked[T]) len() int   { return c.n }
func (c *chunked[T]) at(i int) T { return c.chunks[i/chunkLen][i%chunkLen] }
