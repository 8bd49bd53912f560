package vectors

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io"
	"io/fs"
	"sort"
	"strings"
)

// The shipped files: JSON, and JSON kept gzip-compressed where a file is
// large (the reference's coverage sessions).
//
//go:embed *.json *.json.gz
var shipped embed.FS

// ShippedFile is one of the vector files built into the binary.
type ShippedFile struct {
	Name string
	Data []byte
}

// Shipped returns the project's own vector files, sorted by name, each
// decompressed.
func Shipped() []ShippedFile {
	names, _ := fs.Glob(shipped, "*.json")
	gz, _ := fs.Glob(shipped, "*.json.gz")
	names = append(names, gz...)
	sort.Strings(names)
	out := make([]ShippedFile, 0, len(names))
	for _, n := range names {
		data, _ := shipped.ReadFile(n)
		if strings.HasSuffix(n, ".gz") {
			data = gunzip(data)
		}
		out = append(out, ShippedFile{Name: n, Data: data})
	}
	return out
}

// gunzip reads an embedded file; its test proves every one reads.
func gunzip(data []byte) []byte {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil
	}
	return out
}
