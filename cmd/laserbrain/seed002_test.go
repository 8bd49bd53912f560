package main

// Seed 002's reference script, ralph.sid, run as the seed gives it.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"
)

// seed002Path is seed 002 (the ralph plan), beside the worktree; a clean
// clone (CI) does not have it, and runs the shipped copy instead.
const seed002Path = "../../../shared/seeds/002_7c1b37394ef316a8.txt"

// ralphCopy is ralph.sid as extracted from seed 002, for a clone without
// the seed; TestRalphSidShippedVerbatim holds it to the seed.
const ralphCopy = "testdata/ralph.sid"

// ralphFromSeed extracts §6.3's script from seed 002: the bytes between
// the heading's opening ```sh fence and the closing fence, untouched.
func ralphFromSeed(seed []byte) ([]byte, error) {
	open := []byte("### 6.3 The reference script: `ralph.sid`\n```sh\n")
	i := bytes.Index(seed, open)
	if i < 0 {
		return nil, errors.New("seed 002 has no §6.3 ```sh block")
	}
	body := seed[i+len(open):]
	j := bytes.Index(body, []byte("\n```\n"))
	if j < 0 {
		return nil, errors.New("seed 002's §6.3 block does not close")
	}
	return body[:j+1], nil
}

// ralphScript is the script the testscripts run as ralph.sid: extracted
// from the seed when it is there, else the shipped copy; from says which.
func ralphScript() (script []byte, from string, err error) {
	if seed, err := os.ReadFile(seed002Path); err == nil {
		s, err := ralphFromSeed(seed)
		return s, seed002Path, err
	}
	s, err := os.ReadFile(ralphCopy)
	if err != nil {
		return nil, "", fmt.Errorf("ralph.sid: no seed 002 beside the project and no %s: %w", ralphCopy, err)
	}
	return s, ralphCopy, nil
}

// The shipped copy is the seed's script byte for byte, so a clone without
// the seed still runs the seed's script and not a retyped one.
func TestRalphSidShippedVerbatim(t *testing.T) {
	seed, err := os.ReadFile(seed002Path)
	if err != nil {
		t.Skipf("seed 002 not available beside the project (%v): skipping the verbatim check of %s", err, ralphCopy)
	}
	want, err := ralphFromSeed(seed)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(ralphCopy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from seed 002 §6.3 (re-extract it):\nshipped:\n%s\nseed:\n%s", ralphCopy, got, want)
	}
	for _, line := range []string{"judge judge --soak \"$SOAK\"", "*) echo \"ralph: judge malfunction\" >&2; exit 4 ;;", "exit 0\n"} {
		if !bytes.Contains(want, []byte(line)) {
			t.Fatalf("the extraction lost %q:\n%s", line, want)
		}
	}
}
