package ledger

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// File names are bytes; JSON strings are Unicode. A name that is valid
// UTF-8 is stored as itself. A name that is not — or that begins with a
// double quote, so that the two forms never collide — is stored Go-quoted
// (strconv.Quote): the stored string starts and ends with '"' and carries
// every byte that is not UTF-8 as \xNN. So the Latin-1 name "caf\xe9.go"
// is stored as the 12 characters "caf\xe9.go" (quotes included), which is
// "\"caf\\xe9.go\"" inside a JSON document, and decodes back to exactly
// its 8 bytes. Without this, encoding/json turns the byte into U+FFFD and
// the phantom check would lstat a name that does not exist.

// EncodeName is the stored form of the file name raw.
func EncodeName(raw string) string {
	if utf8.ValidString(raw) && !strings.HasPrefix(raw, `"`) {
		return raw
	}
	return strconv.Quote(raw)
}

// DecodeName is the file name a stored form names, byte for byte.
func DecodeName(stored string) (string, error) {
	if !strings.HasPrefix(stored, `"`) {
		return stored, nil
	}
	raw, err := strconv.Unquote(stored)
	if err != nil {
		return "", fmt.Errorf("%s starts with a double quote, so it must be a quoted name (as Go's strconv.Quote writes one, \\xNN for a byte that is not UTF-8): %v", stored, err)
	}
	return raw, nil
}
