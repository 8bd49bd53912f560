package loop

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// What an agent's or judge's stdin reaches it as: the first CapHead and
// the last CapTail bytes, with a pointer to the whole of it in between.
const (
	CapHead = 64 << 10
	CapTail = 16 << 10
	// maxSpill bounds the spilled copy of one context; what comes after is
	// read and dropped, and the marker says so.
	maxSpill = 1 << 30
)

// capped is one call's context as the session gets it.
type capped struct {
	Text  string
	Size  int64  // bytes read
	Spill string // the full context's file, when it was cut
}

// capContext reads r to its end. Up to CapHead+CapTail bytes pass whole;
// more are written to spillPath in full while only the head and a rolling
// tail are kept, and the text becomes head + "[truncated: full log at
// spillPath]" + tail, cut on UTF-8 boundaries.
func capContext(r io.Reader, spillPath string) (capped, error) {
	if r == nil {
		return capped{}, nil
	}
	br := bufio.NewReaderSize(r, 64<<10)
	buf := make([]byte, 0, CapHead+CapTail+1)
	for len(buf) <= CapHead+CapTail {
		n, err := br.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return capped{Text: string(buf), Size: int64(len(buf))}, nil
		}
		if err != nil {
			return capped{}, fmt.Errorf("reading the context: %w", err)
		}
	}
	f, err := os.OpenFile(spillPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return capped{}, fmt.Errorf("spilling the context: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(buf); err != nil {
		return capped{}, fmt.Errorf("spilling the context: %w", err)
	}
	head := buf[:CapHead]
	tail := newRing(CapTail)
	tail.Write(buf[CapHead:])
	size := int64(len(buf))
	written := size
	chunk := make([]byte, 256<<10)
	for {
		n, err := br.Read(chunk)
		if n > 0 {
			size += int64(n)
			tail.Write(chunk[:n])
			if written < maxSpill {
				w := min(int64(n), maxSpill-written)
				if _, err := f.Write(chunk[:w]); err != nil {
					return capped{}, fmt.Errorf("spilling the context: %w", err)
				}
				written += w
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return capped{}, fmt.Errorf("reading the context: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return capped{}, fmt.Errorf("spilling the context: %w", err)
	}
	marker := fmt.Sprintf("\n[truncated: full log at %s]\n", spillPath)
	if written < size {
		marker = fmt.Sprintf("\n[truncated: full log at %s — its first %d of %d bytes; the rest was dropped]\n", spillPath, written, size)
	}
	h := headCut(head)
	t := tailCut(tail.Bytes())
	return capped{Text: string(h) + marker + string(t), Size: size, Spill: spillPath}, nil
}

// headCut drops a UTF-8 sequence the cut split at the end.
func headCut(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size > 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}

// tailCut drops continuation bytes a cut left at the start.
func tailCut(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return b
}

// ring keeps the last n bytes written.
type ring struct {
	buf  []byte
	next int
	full bool
}

func newRing(n int) *ring { return &ring{buf: make([]byte, n)} }

func (r *ring) Write(p []byte) {
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.next, r.full = 0, true
		return
	}
	n := copy(r.buf[r.next:], p)
	if n < len(p) {
		copy(r.buf, p[n:])
		r.full = true
	}
	r.next = (r.next + len(p)) % len(r.buf)
	if r.next == 0 && len(p) > 0 {
		r.full = true
	}
}

func (r *ring) Bytes() []byte {
	if !r.full {
		return append([]byte(nil), r.buf[:r.next]...)
	}
	return append(append([]byte(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}
