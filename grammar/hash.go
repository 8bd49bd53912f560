package grammar

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// hashExcludedKeys are the lines the content hash leaves out: the ones that
// carry the version and the hash itself.
var hashExcludedKeys = []string{`"laserbrain_grammar"`, `"content_hash"`, `"content_hash_what"`}

// ContentHash computes a grammar's content_hash: render canonically, drop
// every line that carries the version or a hash, SHA-256 the rest, keep the
// first 16 hex digits.
func ContentHash(v Value) string {
	return hashRendering(string(Render(v)))
}

// hashRendering applies the line exclusion and digest to a rendered document.
func hashRendering(rendered string) string {
	lines := strings.Split(rendered, "\n")
	kept := lines[:0]
	for _, line := range lines {
		t := strings.TrimSpace(line)
		excluded := false
		for _, k := range hashExcludedKeys {
			if strings.HasPrefix(t, k) {
				excluded = true
				break
			}
		}
		if !excluded {
			kept = append(kept, line)
		}
	}
	return sha16(strings.Join(kept, "\n"))
}

// HashBytes parses a grammar document and returns its content hash.
func HashBytes(data []byte) (string, error) {
	v, err := Parse(data)
	if err != nil {
		return "", err
	}
	return ContentHash(v), nil
}

func sha16(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}
