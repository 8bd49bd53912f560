package jsonl

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// quoted is s as encoding/json writes it, with or without its HTML escapes.
func quoted(t testing.TB, s string, html bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// randomString draws bytes from a mix that reaches every escape: ASCII,
// control bytes, quotes, HTML's three, multi-byte runes, U+2028/U+2029,
// and bytes that are not UTF-8 (a lone continuation, a cut rune).
func randomString(r *rand.Rand) string {
	parts := []string{"a", "Z", " ", "0", "\"", "\\", "/", "<", ">", "&", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"é", "⟨", "⟩", "Φ", "😀", "\u2028", "\u2029", "\ufffd", "\xff", "\x80", "\xc3", "\xe2\x80", "\xed\xa0\x80"}
	var b []byte
	for n := r.IntN(24); n > 0; n-- {
		b = append(b, parts[r.IntN(len(parts))]...)
	}
	return string(b)
}

// AppendString writes exactly what encoding/json writes, HTML escapes on
// and off, over every byte value alone and thousands of drawn strings.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var in []string
	for c := 0; c < 256; c++ {
		in = append(in, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 5000; i++ {
		in = append(in, randomString(r))
	}
	for _, s := range in {
		for _, html := range []bool{false, true} {
			if got, want := AppendString([]byte("pre"), s, html), append([]byte("pre"), quoted(t, s, html)...); !bytes.Equal(got, want) {
				t.Fatalf("AppendString(%q, html %v):\n got %s\nwant %s", s, html, got, want)
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("⟨x⟩ \"q\" <a&b> \\ \n\t\b\f\x00\x1f\u2028\u2029\xc3")
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{false, true} {
			if got, want := AppendString(nil, s, html), quoted(t, s, html); !bytes.Equal(got, want) {
				t.Fatalf("AppendString(%q, html %v):\n got %s\nwant %s", s, html, got, want)
			}
		}
	})
}
