package fsx

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laserkit/laserkit/internal/testenv"
)

func TestWriteFileReplacesWhole(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "f.json")
	if err := WriteFile(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two" {
		t.Fatalf("got %q, %v", b, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}

func TestWriteFileInDirRefusesMissingParent(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "missing", "f.html")
	err := WriteFileInDir(p, []byte("x"), 0o644)
	var np *ErrNoParent
	if !errors.As(err, &np) || np.Dir != filepath.Join(root, "missing") || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("want ErrNoParent for %s wrapping not-exist, got %v", filepath.Join(root, "missing"), err)
	}
	if _, err := os.Stat(filepath.Join(root, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the missing parent was created: %v", err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileInDir(filepath.Join(file, "f.html"), []byte("x"), 0o644); !errors.As(err, &np) {
		t.Fatalf("parent is a file: want ErrNoParent, got %v", err)
	}
	ok := filepath.Join(root, "f.html")
	if err := WriteFileInDir(ok, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ok); err != nil || string(b) != "x" {
		t.Fatalf("got %q, %v", b, err)
	}
}

func TestLockExcludesSecondHolder(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	l, err := LockFile(p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks are per open file description, so a second LockFile in the
	// same process contends like another process would.
	if _, err := LockFile(p, 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "still held") {
		t.Fatalf("second lock: want contention error, got %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := LockFile(p, time.Second)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}

// TestMain lets the test binary double as a lock-holding child process.
func TestMain(m *testing.M) {
	if p := os.Getenv("FSX_HOLD_LOCK"); p != "" {
		if _, err := LockFile(p, time.Second); err != nil {
			os.Exit(3)
		}
		_, _ = os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestLockReleasedWhenHolderDies(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FSX_HOLD_LOCK="+p)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(out, buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("child did not take the lock: %q %v", buf, err)
	}
	if _, err := LockFile(p, 20*time.Millisecond); err == nil {
		t.Fatal("lock taken while the child holds it")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	l, err := LockFile(p, time.Second)
	if err != nil {
		t.Fatalf("lock not released after holder was killed: %v", err)
	}
	l.Unlock()
}

func TestAppendSync(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ledger.jsonl")
	for _, s := range []string{"a\n", "b\n"} {
		if err := AppendSync(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(p)
	if string(b) != "a\nb\n" {
		t.Fatalf("got %q", b)
	}
}

// TestWriteFileInDirRefusesNonRegular: a path holding a symbolic link, a
// FIFO, a device node, a socket or a directory is not replaced — the kernel
// made each of them here, and each is still what it was afterwards, the
// link's target unchanged — while a regular file is.
func TestWriteFileInDirRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, what string
		make       func(p string) error
		mode       fs.FileMode
	}{
		{"link", "a symbolic link", func(p string) error { return os.Symlink(target, p) }, fs.ModeSymlink},
		{"fifo", "a FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }, fs.ModeNamedPipe},
		{"null", "a character device", func(p string) error { return syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3) }, fs.ModeDevice | fs.ModeCharDevice},
		{"sock", "a socket", func(p string) error {
			l, err := net.Listen("unix", p)
			if err == nil {
				t.Cleanup(func() { l.Close() })
			}
			return err
		}, fs.ModeSocket},
		{"dir", "a directory", func(p string) error { return os.Mkdir(p, 0o755) }, fs.ModeDir},
	} {
		p := filepath.Join(dir, tc.name)
		if err := tc.make(p); err != nil {
			if errors.Is(err, syscall.EPERM) {
				testenv.SkipPartOrFail(t, "cannot make %s here: %v", tc.what, err)
				continue
			}
			t.Fatal(err)
		}
		err := WriteFileInDir(p, []byte("report"), 0o644)
		var nr *ErrNotRegular
		if !errors.As(err, &nr) || !strings.Contains(err.Error(), p+" is "+tc.what) {
			t.Errorf("%s: err = %v, want ErrNotRegular naming %s", tc.name, err, tc.what)
		}
		if info, err := os.Lstat(p); err != nil || info.Mode().Type() != tc.mode.Type() {
			t.Errorf("%s: after the refusal: %v %v", tc.name, info.Mode(), err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "kept" {
		t.Fatalf("the link's target was written: %q", b)
	}
	if err := WriteFileInDir(target, []byte("replaced"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "replaced" {
		t.Fatalf("a regular file was not replaced: %q", b)
	}
}

// TestReadCapped: exactly the cap is read whole, one byte more is refused
// with ErrTooLarge naming the input and the cap.
func TestReadCapped(t *testing.T) {
	if b, err := ReadCapped(strings.NewReader("abcd"), "in", 4); err != nil || string(b) != "abcd" {
		t.Fatalf("at the cap: %q %v", b, err)
	}
	_, err := ReadCapped(strings.NewReader("abcde"), "in", 4)
	var big *ErrTooLarge
	if !errors.As(err, &big) || big.Name != "in" || big.Max != 4 || err.Error() != "in holds more than 4 bytes, the most this command reads: nothing was done" {
		t.Fatalf("over the cap: %v", err)
	}
	if _, err := ReadFileCapped(filepath.Join(t.TempDir(), "none"), 4); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

// ReplaceUnsynced replaces the file whole, with the mode asked for, and
// leaves no temporary file beside it.
func TestReplaceUnsyncedReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, want := range []string{"one", "two, longer"} {
		if err := ReplaceUnsynced(p, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Fatalf("got %q, %v, want %q", b, err, want)
		}
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("the directory holds %d entries, want the file alone", len(names))
	}
	if err := ReplaceUnsynced(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Error("a replace into a directory that is not there succeeded")
	}
}

// OverwriteUnsynced pads a small record to one block and, from then on,
// writes over the same file; a record larger than a block, or a file of
// another size, is replaced whole. Every content reads back as the record
// written, for a JSON reader.
func TestOverwriteUnsyncedKeepsTheFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	inode := func() uint64 {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v", fi.Mode())
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	large := `{"n": 4, "pad": "` + strings.Repeat("x", Block) + `"}`
	var last uint64
	for i, c := range []struct {
		write   string
		size    int
		inPlace bool
	}{
		{`{"n": 1, "window": ["a", "b"]}`, Block, false},
		{`{"n": 2}`, Block, true},
		{`{"n": 3, "window": ["a", "b", "c"]}`, Block, true},
		{large, len(large), false},
		{`{"n": 5}`, Block, false},
		{`{"n": 6}`, Block, true},
	} {
		if err := OverwriteUnsynced(p, []byte(c.write), 0o640); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) != c.size || strings.TrimRight(string(b), " ") != c.write {
			t.Fatalf("write %d: got %d bytes (%.40q…), %v; want %d", i+1, len(b), b, err, c.size)
		}
		var v struct{ N int }
		if err := json.Unmarshal(b, &v); err != nil || v.N != i+1 {
			t.Errorf("write %d reads as %+v, %v", i+1, v, err)
		}
		ino := inode()
		if c.inPlace != (ino == last) {
			t.Errorf("write %d: inode %d, was %d; in place: want %v", i+1, ino, last, c.inPlace)
		}
		last = ino
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("the directory holds %d entries, want the file alone", len(names))
	}
	if err := OverwriteUnsynced(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Error("a write into a directory that is not there succeeded")
	}
}
