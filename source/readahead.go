package source

import "io"

// readahead runs a slow reader — gzip's inflate, ~0.3 s for 100 MB, three
// times what the rest of analyze takes — on a goroutine of its own, ahead
// of the goroutine that frames the records: a gzip capture then takes the
// time of its inflate instead of the sum of both. It hands the bytes and
// the error src returned, in src's order; only for regular files, whose
// reads never wait for a writer, so that Close never waits long for the
// goroutine to see that it must stop.
type readahead struct {
	full chan raChunk // read, in order
	free chan []byte  // empty buffers for the goroutine
	stop chan struct{}
	done chan struct{} // closed when the goroutine returned
	buf  []byte        // the chunk being handed out
	cur  []byte        // what is left of it
	err  error         // src's error after buf
}

type raChunk struct {
	b   []byte
	err error
}

const (
	raBuffers = 4
	raSize    = 256 << 10
)

func newReadahead(src io.Reader) *readahead {
	r := &readahead{full: make(chan raChunk, raBuffers), free: make(chan []byte, raBuffers),
		stop: make(chan struct{}), done: make(chan struct{})}
	for range raBuffers {
		r.free <- make([]byte, raSize)
	}
	go r.run(src)
	return r
}

func (r *readahead) run(src io.Reader) {
	defer close(r.done)
	for {
		var b []byte
		select {
		case b = <-r.free:
		case <-r.stop:
			return
		}
		n, err := 0, error(nil)
		for n < len(b) && err == nil {
			var k int
			k, err = src.Read(b[n:])
			n += k
		}
		select {
		case r.full <- raChunk{b[:n], err}:
		case <-r.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

func (r *readahead) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		if r.buf != nil {
			r.free <- r.buf[:cap(r.buf)]
			r.buf = nil
		}
		c := <-r.full
		r.buf, r.cur, r.err = c.b, c.b, c.err
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// close stops the goroutine and waits for it: src is the caller's again.
func (r *readahead) close() {
	select {
	case <-r.stop:
	default:
		close(r.stop)
	}
	<-r.done
}
