package version

import (
	"runtime"
	"runtime/debug"

	"github.com/laserkit/laserkit/laserbrain"
)

// stamp is the version `make build` writes in:
//
//	go build -ldflags "-X github.com/laserkit/laserkit/internal/version.stamp=v1.2.3"
var stamp string

// commitStamp is the commit `make build` writes in, for builds the Go
// toolchain records no VCS information for (a worktree, a tarball).
var commitStamp string

// Info is one binary's build.
type Info struct {
	Name string
	// Version is the stamped version, else the module version the Go
	// toolchain recorded (a tag for `go install module@version`, a
	// pseudo-version in a checkout), else "devel".
	Version string
	// Commit is the VCS revision the binary was built from, "" when the
	// build recorded none (go test binaries, builds outside a checkout).
	Commit     string
	CommitTime string // RFC 3339, "" when unknown
	Modified   bool   // built from a work tree with uncommitted changes
	Go         string // e.g. go1.26.8
	Platform   string // GOOS/GOARCH
	// The grammar the binary's tables were generated from (grammar.json's
	// laserbrain_grammar and content_hash).
	GrammarVersion     string
	GrammarContentHash string
}

// Get reads the running binary's build information.
func Get(name string) Info {
	i := Info{
		Name: name, Version: stamp, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		GrammarVersion: laserbrain.GrammarVersion, GrammarContentHash: laserbrain.GrammarContentHash,
	}
	bi, ok := debug.ReadBuildInfo()
	if ok {
		if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			i.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				i.Commit = s.Value
			case "vcs.time":
				i.CommitTime = s.Value
			case "vcs.modified":
				i.Modified = s.Value == "true"
			}
		}
	}
	if i.Commit == "" {
		i.Commit = commitStamp
	}
	if i.Version == "" {
		i.Version = "devel"
	}
	return i
}

// Text is the version as a person reads it: the name and version on the
// first line, then one fact a line.
func (i Info) Text() string {
	commit := "unknown (not recorded in this build)"
	if i.Commit != "" {
		commit = i.Commit
		if i.CommitTime != "" {
			commit += " (" + i.CommitTime + ")"
		}
		if i.Modified {
			commit += ", modified"
		}
	}
	return i.Name + " " + i.Version + "\n" +
		"commit:  " + commit + "\n" +
		"go:      " + i.Go + " " + i.Platform + "\n" +
		"grammar: " + i.GrammarVersion + ", content_hash " + i.GrammarContentHash + "\n"
}

// SnakeJSON is the version as laserbrain prints it under --json.
type SnakeJSON struct {
	Name       string  `json:"name"`
	Version    string  `json:"version"`
	Commit     *string `json:"commit"`
	CommitTime *string `json:"commit_time"`
	Modified   bool    `json:"modified"`
	Go         string  `json:"go"`
	Platform   string  `json:"platform"`
	Grammar    struct {
		Version     string `json:"version"`
		ContentHash string `json:"content_hash"`
	} `json:"grammar"`
}

// CamelJSON is the version as ponder prints it under --json (ponder's
// keys are camelCase).
type CamelJSON struct {
	Name       string  `json:"name"`
	Version    string  `json:"version"`
	Commit     *string `json:"commit"`
	CommitTime *string `json:"commitTime"`
	Modified   bool    `json:"modified"`
	Go         string  `json:"go"`
	Platform   string  `json:"platform"`
	Grammar    struct {
		Version     string `json:"version"`
		ContentHash string `json:"contentHash"`
	} `json:"grammar"`
}

func orNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Snake is i in laserbrain's JSON shape; unknown commit fields are null.
func (i Info) Snake() SnakeJSON {
	j := SnakeJSON{Name: i.Name, Version: i.Version, Commit: orNil(i.Commit), CommitTime: orNil(i.CommitTime),
		Modified: i.Modified, Go: i.Go, Platform: i.Platform}
	j.Grammar.Version, j.Grammar.ContentHash = i.GrammarVersion, i.GrammarContentHash
	return j
}

// Camel is i in ponder's JSON shape.
func (i Info) Camel() CamelJSON {
	j := CamelJSON{Name: i.Name, Version: i.Version, Commit: orNil(i.Commit), CommitTime: orNil(i.CommitTime),
		Modified: i.Modified, Go: i.Go, Platform: i.Platform}
	j.Grammar.Version, j.Grammar.ContentHash = i.GrammarVersion, i.GrammarContentHash
	return j
}
