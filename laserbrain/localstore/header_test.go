package localstore

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Every header encodeRecord writes is read without encoding/json, and to
// what encoding/json reads.
func TestWrittenHeadersTakeTheFastRead(t *testing.T) {
	for _, c := range []struct {
		id        string
		base, n   int
		steps, st string
	}{
		{"r1", 0, 1, "{\"n\":1}\n", `{"id":"r1"}`},
		{"a.b_c-9", 41, 57, "", `{"id":"a.b_c-9","step_count":57}`},
		{"x", 1 << 30, 1<<30 + 1, "{}\n{}\n", "{}"},
	} {
		rec := encodeRecord(nil, c.id, c.base, c.n, []byte(c.steps), []byte(c.st))
		head, _, _ := bytes.Cut(bytes.TrimPrefix(rec, []byte("\n")), []byte("\n"))
		var fast, slow recordHeader
		if !readHeader(head, &fast) {
			t.Fatalf("%s: not read by the fast path", head)
		}
		if err := json.Unmarshal(head, &slow); err != nil || fast != slow {
			t.Fatalf("%s: fast %+v, encoding/json %+v (%v)", head, fast, slow, err)
		}
		if fast.Run != c.id || fast.Base != c.base || fast.N != c.n || fast.Steps != int64(len(c.steps)) || fast.State != int64(len(c.st)+1) {
			t.Fatalf("%s: read as %+v", head, fast)
		}
	}
}

// Headers the fast path must leave to encoding/json, and what decodeHeader
// then makes of them.
func TestUnusualHeadersReadAsEncodingJSONReadsThem(t *testing.T) {
	for _, head := range []string{
		`{"run":"a\u0062","base":0,"n":1,"steps":2,"state":3,"crc":4}`, // an escape
		`{"run":"a","n":1,"base":0,"steps":2,"state":3,"crc":4}`,       // keys reordered
		`{"run":"a","base":0,"n":1,"steps":2,"state":3,"crc":4} `,      // trailing space
		`{"run":"a","base":00,"n":1,"steps":2,"state":3,"crc":4}`,      // a leading zero: not JSON
		`{"run":"a","base":-1,"n":1,"steps":2,"state":3,"crc":4}`,      // a sign
		`{"run":"a","base":0,"n":1,"steps":2.0,"state":3,"crc":4}`,     // not a whole number
		`{"run":"a","base":0,"n":1,"steps":2,"state":3,"crc":4294967296}`,
		`{"run":"a","base":0,"n":1,"steps":2,"state":3,"crc":4,"x":1}`,
		`{"run":"é","base":0,"n":1,"steps":2,"state":3,"crc":4}`,
		`{"run":"a","base":0,"n":1,"steps":2,"state":3}`,
	} {
		var fast recordHeader
		if readHeader([]byte(head), &fast) {
			t.Errorf("%s: taken by the fast path", head)
		}
		var got, want recordHeader
		ok := decodeHeader([]byte(head), &got)
		werr := json.Unmarshal([]byte(head), &want)
		if ok != (werr == nil) || ok && got != want {
			t.Errorf("%s: decodeHeader %v %+v, encoding/json %v %+v", head, ok, got, werr, want)
		}
	}
}

// Whatever the fast path accepts, encoding/json reads the same way.
func FuzzFastHeader(f *testing.F) {
	f.Add([]byte(`{"run":"r1","base":0,"n":1,"steps":313,"state":925,"crc":5322511}`))
	f.Add([]byte(`{"run":"","base":0,"n":0,"steps":0,"state":0,"crc":0}`))
	f.Fuzz(func(t *testing.T, head []byte) {
		var fast, slow recordHeader
		if !readHeader(head, &fast) {
			return
		}
		if err := json.Unmarshal(head, &slow); err != nil || fast != slow {
			t.Fatalf("%q: fast %+v, encoding/json %+v (%v)", head, fast, slow, err)
		}
	})
}
