package shell

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/laserkit/laserkit/internal/fsx"
)

// The text of a script a command runs or a program reads: a file written
// earlier in the line, a descriptor's input, or a file on disk within the
// analysis's limits.

// scriptText is the text of a script file a command runs.
func (a *analyzer) scriptText(file arg, io stdio) (text string, ok bool, why string) {
	if !file.known {
		if strings.HasPrefix(file.val, "<(") {
			if ps, found := a.procs[file.val]; found {
				if len(ps.Stmts) == 1 {
					if out := a.output(ps.Stmts[0]); out.kind == literalInput {
						return out.text, true, ""
					}
				}
				return "", false, "the output of " + file.val + " cannot be read here"
			}
		}
		return "", false, "a file named only at run time"
	}
	switch p := file.val; {
	case p == "/dev/stdin" || p == "-":
		return inputText(io.in)
	case strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/"):
		var fd int
		_, err := fmt.Sscan(p[strings.LastIndexByte(p, '/')+1:], &fd)
		if err != nil {
			return "", false, "an unknown descriptor"
		}
		if fd == 0 {
			return inputText(io.in)
		}
		return inputText(io.fds[fd])
	}
	path, known := a.resolve(file)
	if f, ok := a.files[path]; ok && known {
		if f.known {
			return f.text, true, ""
		}
		return "", false, "written earlier in the command with content the gate cannot see"
	}
	if !known || !filepath.IsAbs(path) {
		return "", false, "a path the gate cannot place (the directory it runs in is unknown)"
	}
	if f, ok := a.files[path]; ok {
		if f.known {
			return f.text, true, ""
		}
		return "", false, "written earlier in the command with content the gate cannot see"
	}
	if a.readBytes >= maxScriptBytes {
		return "", false, "more script files than the gate reads for one command"
	}
	data, err := readScript(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, whyMissing
	}
	if err != nil {
		return "", false, err.Error()
	}
	a.readBytes += len(data)
	a.readFrom(path, data)
	return string(data), true, ""
}

func inputText(in input) (string, bool, string) {
	if in.kind == literalInput {
		return in.text, true, ""
	}
	return "", false, "its input cannot be read here"
}

// whyMissing: the file does not exist.
const whyMissing = "it does not exist"

// mayHaveWritten: something earlier in the line may have written a file
// the gate cannot name.
func (a *analyzer) mayHaveWritten() bool {
	return slices.ContainsFunc(a.writes, func(w Write) bool { return !w.Known })
}

// readScript reads a regular file of at most MaxScriptFile bytes.
func readScript(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("it cannot be read (%v)", fsx.WithoutPath(err))
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("it is not a regular file")
	case fi.Size() > MaxScriptFile:
		return nil, fmt.Errorf("it is larger than %d KiB, more than the gate reads", MaxScriptFile>>10)
	}
	f, err := openNoBlock(path)
	if err != nil {
		return nil, fmt.Errorf("it cannot be read (%v)", fsx.WithoutPath(err))
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(f, MaxScriptFile+1)); err != nil {
		return nil, fmt.Errorf("it cannot be read (%v)", err)
	}
	if b.Len() > MaxScriptFile {
		return nil, fmt.Errorf("it is larger than %d KiB, more than the gate reads", MaxScriptFile>>10)
	}
	return b.Bytes(), nil
}

// readText is the text of a file a program reads (sed -f, awk -f): one
// written earlier in the line, or one on disk; "" when it cannot be read
// (recorded as unknown).
func (a *analyzer) readText(file arg) string {
	text, ok, why := a.scriptText(file, stdio{})
	if !ok {
		a.unknown("reads its program from "+file.val, why)
	}
	return text
}

// openNoBlock opens a file for reading without blocking on a FIFO or a
// device that never answers (the analysis has a time budget).
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
