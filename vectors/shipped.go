package vectors

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed *.json
var shipped embed.FS

// ShippedFile is one of the vector files built into the binary.
type ShippedFile struct {
	Name string
	Data []byte
}

// Shipped returns the project's own vector files, sorted by name.
func Shipped() []ShippedFile {
	names, _ := fs.Glob(shipped, "*.json")
	sort.Strings(names)
	out := make([]ShippedFile, 0, len(names))
	for _, n := range names {
		data, _ := shipped.ReadFile(n)
		out = append(out, ShippedFile{Name: n, Data: data})
	}
	return out
}
