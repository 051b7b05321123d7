package gate

import "sync"

// Size-classed pools of fixed arrays (after nats-server's nbPool): buffers
// are stored as array pointers so Put and Get never box a slice header.
// Buffers whose capacity is not exactly a class size are left to the GC.
const (
	class0 = 512
	class1 = 4 << 10
	class2 = 16 << 10
	class3 = 64<<10 + 16 // one maximal default frame plus its header
)

var (
	pool0 sync.Pool
	pool1 sync.Pool
	pool2 sync.Pool
	pool3 sync.Pool
)

// getBuf returns an empty buffer with capacity >= n, pooled when n fits a class.
func getBuf(n int) []byte {
	switch {
	case n <= class0:
		if p, _ := pool0.Get().(*[class0]byte); p != nil {
			return p[:0]
		}
		return new([class0]byte)[:0]
	case n <= class1:
		if p, _ := pool1.Get().(*[class1]byte); p != nil {
			return p[:0]
		}
		return new([class1]byte)[:0]
	case n <= class2:
		if p, _ := pool2.Get().(*[class2]byte); p != nil {
			return p[:0]
		}
		return new([class2]byte)[:0]
	case n <= class3:
		if p, _ := pool3.Get().(*[class3]byte); p != nil {
			return p[:0]
		}
		return new([class3]byte)[:0]
	}
	return make([]byte, 0, n)
}

// putBuf returns b (as obtained from getBuf, not re-sliced from the front) to
// its pool. The caller must not touch b afterwards.
func putBuf(b []byte) {
	switch cap(b) {
	case class0:
		pool0.Put((*[class0]byte)(b[:class0]))
	case class1:
		pool1.Put((*[class1]byte)(b[:class1]))
	case class2:
		pool2.Put((*[class2]byte)(b[:class2]))
	case class3:
		pool3.Put((*[class3]byte)(b[:class3]))
	}
}

// growBuf returns a buffer holding b's bytes with capacity >= n, returning b
// to its pool.
func growBuf(b []byte, n int) []byte {
	if cap(b) >= n {
		return b
	}
	nb := getBuf(n)
	nb = append(nb, b...)
	if b != nil {
		putBuf(b)
	}
	return nb
}
