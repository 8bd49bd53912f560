// Package dcg reads the corpus of commands in operator/testdata/dcg, a
// copy of a peer guard's test corpus (destructive_command_guard, MIT),
// for the tests that measure the gate against it and the fuzzers that seed
// from it. Its expectations are that guard's policy, not ours.
package dcg

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// Case is one command with the decision the corpus expects for it.
type Case struct {
	Source   string // file and case, for messages
	Category string
	Command  string
	Block    bool // the corpus says it must be blocked
}

// Cases reads the corpus under root: its TOML cases, then the lines of its
// e2e command fixtures. Hook-JSON cases are left to the hook's testscript.
func Cases(root string) ([]Case, error) {
	out, err := tomlCases(root)
	if err != nil {
		return nil, err
	}
	fixtures, err := filepath.Glob(filepath.Join(root, "e2e/fixtures/commands/*.txt"))
	if err != nil {
		return nil, err
	}
	for _, path := range fixtures {
		cs, err := fixtureCases(path)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

func tomlCases(root string) ([]Case, error) {
	var out []Case
	err := filepath.Walk(filepath.Join(root, "corpus"), func(path string, info os.FileInfo, err error) error {
		if err != nil || !strings.HasSuffix(path, ".toml") {
			return err
		}
		var f struct {
			Case []struct {
				ID, Category, Description, Command, Expected, InputKind string
				ExpectedDecision                                        string `toml:"expected_decision"`
				InputKindTOML                                           string `toml:"input_kind"`
			} `toml:"case"`
		}
		if _, err := toml.DecodeFile(path, &f); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, _ := filepath.Rel(filepath.Join(root, "corpus"), path)
		for i, c := range f.Case {
			if c.InputKindTOML == "hook_json" {
				continue
			}
			exp := c.Expected
			if exp == "" {
				exp = c.ExpectedDecision
			}
			cat := strings.TrimSuffix(rel, ".toml")
			if c.Category != "" {
				cat += ":" + c.Category
			}
			out = append(out, Case{Source: fmt.Sprintf("%s case %d", rel, i), Category: cat, Command: c.Command, Block: exp == "deny"})
		}
		return nil
	})
	return out, err
}

// fixtureCases reads one fixture file: a command a line, blocked when the
// file is dangerous.txt or the line says BLOCK:, allowed when it says
// ALLOW:.
func fixtureCases(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Case
	base := strings.TrimSuffix(filepath.Base(path), ".txt")
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "#") {
			continue
		}
		block := base == "dangerous"
		switch {
		case strings.HasPrefix(s, "BLOCK:"):
			block, s = true, strings.TrimPrefix(s, "BLOCK:")
		case strings.HasPrefix(s, "ALLOW:"):
			block, s = false, strings.TrimPrefix(s, "ALLOW:")
		}
		if base == "heredocs" {
			// The file writes newlines and tabs as \n and \t.
			s = strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(s)
		}
		out = append(out, Case{Source: fmt.Sprintf("e2e/%s.txt:%d", base, line), Category: "e2e/" + base, Command: s, Block: block})
	}
	return out, sc.Err()
}
