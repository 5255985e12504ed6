package tui

// chunked is an append-only list stored in fixed-size chunks: growing it
// never copies what it holds, so a million-entry index costs its size and
// not twice that while a slice doubles.
type chunked[T any] struct {
	chunks [][]T
	n      int
	size   int // entries a chunk; 0 is chunkLen
}

const chunkLen = 1 << 16

func (c *chunked[T]) per() int {
	if c.size == 0 {
		return chunkLen
	}
	return c.size
}

func (c *chunked[T]) append(vs ...T) {
	per := c.per()
	for len(vs) > 0 {
		if c.n%per == 0 {
			c.chunks = append(c.chunks, make([]T, 0, per))
		}
		last := &c.chunks[len(c.chunks)-1]
		k := min(len(vs), per-len(*last))
		*last = append(*last, vs[:k]...)
		vs = vs[k:]
		c.n += k
	}
}

func (c *chunked[T]) len() int { return c.n }
func (c *chunked[T]) at(i int) T {
	if c.size == 0 {
		return c.chunks[i/chunkLen][i%chunkLen]
	}
	return c.chunks[i/c.size][i%c.size]
}
