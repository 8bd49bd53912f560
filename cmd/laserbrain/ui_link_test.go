package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A browser that crashed with the live view open took the session its
// one-time link gave: the link is spent, so opening it again is refused.
// SIGUSR1 (or Enter, where ui runs on a terminal) makes ui print a new
// one-time link; a fresh browser gets in with it, and the old session —
// a page left open elsewhere — no longer reads the view. Driven with the
// real binary.
func TestUINewLinkAfterACrash(t *testing.T) {
	lb := laserbrainBinary(t)
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	cmd := exec.Command(lb, "ui", "--repo", repo)
	cmd.Env = append(os.Environ(), "HOME="+root, "LASERBRAIN_HOME="+filepath.Join(root, "lb"), "LASERBRAIN_RUN=", "LASERBRAIN_BROKER=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	links := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "http://") {
				links <- l
			}
		}
		close(links)
	}()
	next := func() string {
		t.Helper()
		select {
		case l, ok := <-links:
			if !ok {
				t.Fatal("laserbrain ui ended without a link")
			}
			return l
		case <-time.After(60 * time.Second):
			t.Fatal("no link from laserbrain ui within 60s")
		}
		return ""
	}
	browser := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Timeout: 20 * time.Second}
	}
	get := func(c *http.Client, u string) int {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	first := next()
	base := first[:strings.Index(first, "/?")]
	crashed := browser()
	if code := get(crashed, first); code != http.StatusOK {
		t.Fatalf("the first link: %d", code)
	}
	fresh := browser()
	if code := get(fresh, first); code != http.StatusForbidden {
		t.Fatalf("the spent link opened again: %d", code)
	}
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	second := next()
	if second == first || !strings.HasPrefix(second, base+"/?launch=") {
		t.Fatalf("the new link %q (the first was %q)", second, first)
	}
	if code := get(fresh, second); code != http.StatusOK {
		t.Fatalf("the new link in a fresh browser: %d", code)
	}
	if code := get(fresh, base+"/"); code != http.StatusOK {
		t.Fatalf("the fresh browser's session: %d", code)
	}
	if code := get(crashed, base+"/"); code != http.StatusForbidden {
		t.Fatalf("the old session still reads the view: %d", code)
	}
	if code := get(browser(), second); code != http.StatusForbidden {
		t.Fatalf("the new link opened twice: %d", code)
	}
}
