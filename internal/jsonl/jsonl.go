package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/laserkit/laserkit/internal/fsx"
)

// Pos is a place in a file: a byte offset, at the start of a line, and that
// line's number.
type Pos struct {
	Off  int64
	Line int
}

// Start is the beginning of a file.
var Start = Pos{Off: 0, Line: 1}

// MaxLine bounds one line; a longer one is a *LineError (a file damaged
// into one endless line must not take the reader's memory with it).
const MaxLine = 64 << 20

// LineError is a complete line that is not a record: the file, the line's
// number and what is wrong with it.
type LineError struct {
	Path string
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s line %d is damaged (fix or move the file; nothing was changed): %v", e.Path, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Scan calls fn with each complete, non-blank line of the file at path from
// pos on (without its line feed; the slice is fn's only during the call)
// and the line's number, and returns the position after the last complete
// line: where the next Scan picks up. A missing file has no lines. The last
// line is read only if it ends in a line feed. An error fn returns ends the
// scan and is returned as it is.
func Scan(path string, from Pos, fn func(line []byte, n int) error) (Pos, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return from, nil
	}
	if err != nil {
		return from, err
	}
	defer f.Close()
	return scan(path, io.NewSectionReader(f, from.Off, 1<<62), from, fn)
}

// ScanFile is Scan on an open file, read from pos with ReadAt (the file's
// own offset does not move), up to end (a negative end: to the file's end).
func ScanFile(f *os.File, from Pos, end int64, fn func(line []byte, n int) error) (Pos, error) {
	n := int64(1 << 62)
	if end >= 0 {
		n = max(end-from.Off, 0)
	}
	return scan(f.Name(), io.NewSectionReader(f, from.Off, n), from, fn)
}

// ScanBytes is Scan on data held in memory; name is the file it came from
// (for errors).
func ScanBytes(name string, data []byte, from Pos, fn func(line []byte, n int) error) (Pos, error) {
	pos := from
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if err := visit(name, data[:i], pos.Line, fn); err != nil {
			return pos, err
		}
		pos.Off += int64(i) + 1
		pos.Line++
		data = data[i+1:]
	}
	return pos, nil
}

func scan(name string, r io.Reader, from Pos, fn func(line []byte, n int) error) (Pos, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	pos := from
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if len(long)+len(chunk) > MaxLine {
				return pos, &LineError{Path: name, Line: pos.Line, Err: fmt.Errorf("longer than %d bytes", MaxLine)}
			}
			long = append(long, chunk...)
			continue
		case err == io.EOF:
			return pos, nil // a torn last line, or none: not read
		case err != nil:
			return pos, fmt.Errorf("read %s: %w", name, err)
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if err := visit(name, line[:len(line)-1], pos.Line, fn); err != nil {
			return pos, err
		}
		pos.Off += int64(len(line))
		pos.Line++
	}
}

func visit(name string, line []byte, n int, fn func(line []byte, n int) error) error {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	return fn(line, n)
}

// Decode reads the records of the file at path from pos on into T, in
// order, calling fn with each; a line that does not decode as T is a
// *LineError. It returns where the next Decode picks up.
func Decode[T any](path string, from Pos, fn func(v T, n int) error) (Pos, error) {
	return Scan(path, from, decoder(path, fn))
}

// DecodeBytes is Decode on data held in memory.
func DecodeBytes[T any](name string, data []byte, from Pos, fn func(v T, n int) error) (Pos, error) {
	return ScanBytes(name, data, from, decoder(name, fn))
}

func decoder[T any](name string, fn func(v T, n int) error) func([]byte, int) error {
	return func(line []byte, n int) error {
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return &LineError{Path: name, Line: n, Err: err}
		}
		return fn(v, n)
	}
}

// ReadAll is every record of the file at path, in order (nil for a
// missing file).
func ReadAll[T any](path string) ([]T, error) {
	var out []T
	_, err := Decode(path, Start, func(v T, _ int) error { out = append(out, v); return nil })
	return out, err
}

// Append appends data — whole lines, each ending in a line feed — to the
// file at path with one write and an fsync, creating it with perm. A torn
// last line an unfinished write left is cut off first. The caller holds
// the lock that lets one writer at a time append to the file. Undo takes
// the append back (for a caller whose next step can still fail); a failed
// append leaves the file as it found it, the torn line cut.
func Append(path string, data []byte, perm os.FileMode) (fsx.Undo, error) {
	if len(data) == 0 || data[len(data)-1] != '\n' {
		return nil, fmt.Errorf("append to %s: a record must end in a line feed", path)
	}
	if err := CutTorn(path); err != nil {
		return nil, err
	}
	return fsx.AppendUndoable(path, data, perm)
}

// CutTorn cuts the file at path back to its last line feed: whatever
// follows it is an unfinished write. A missing or empty file, or one that
// ends in a line feed, is left alone (one read of its last byte). The
// caller holds the file's writer lock.
func CutTorn(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	end, err := LastLineEnd(f)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if end == fi.Size() {
		return nil
	}
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("cut the unfinished last line of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return nil
}

// LastLineEnd is the offset just past f's last line feed (0 when it has
// none): the end of its last complete line. It reads backwards from the
// end, only as far as the torn tail reaches.
func LastLineEnd(f *os.File) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	end := fi.Size()
	buf := make([]byte, 4096)
	for end > 0 {
		n := int64(len(buf))
		if n > end {
			n = end
		}
		if _, err := f.ReadAt(buf[:n], end-n); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return end - n + int64(i) + 1, nil
		}
		end -= n
	}
	return 0, nil
}

// errUnusual is what the fast readers below say of a line they leave to
// encoding/json: not wrong, only not in the plain shape they read.
var errUnusual = errors.New("jsonl: not a plain object")

// Members calls fn with each member of the JSON object line holds: its key
// and its value's raw bytes. It is the fast path of a record's decoder for
// the lines laserkit writes itself: a key with an escape, a value it
// cannot delimit, or anything but one object returns an error, and the
// caller decodes the line with encoding/json instead (which then says what
// is wrong, if anything is). The value bytes are line's; a string value
// is handed out only when it is plain (no escape, valid UTF-8, no control
// character), so MemberString reads it without checking it again.
func Members(line []byte, fn func(key string, val []byte) error) error {
	i := skipSpace(line, 0)
	if i >= len(line) || line[i] != '{' {
		return errUnusual
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		if skipSpace(line, i+1) != len(line) {
			return errUnusual
		}
		return nil
	}
	for {
		if i >= len(line) || line[i] != '"' {
			return errUnusual
		}
		end := plainStringEnd(line, i)
		if end < 0 {
			return errUnusual
		}
		key := string(line[i+1 : end-1])
		i = skipSpace(line, end)
		if i >= len(line) || line[i] != ':' {
			return errUnusual
		}
		i = skipSpace(line, i+1)
		vend := valueEnd(line, i)
		if vend < 0 {
			return errUnusual
		}
		if err := fn(key, line[i:vend]); err != nil {
			return err
		}
		i = skipSpace(line, vend)
		if i >= len(line) {
			return errUnusual
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			if skipSpace(line, i+1) != len(line) {
				return errUnusual
			}
			return nil
		default:
			return errUnusual
		}
	}
}

// Read reads one record line into a T: by hand, through member a field at
// a time, when the line is in the plain shape Members reads and member
// takes every field (false: not a field, or not a value, it reads); else by
// encoding/json, so the result is always what json.Unmarshal gives (and
// its error, if any). It is the fast path of a reader that reads whole
// files of records laserkit writes itself.
func Read[T any](line []byte, member func(v *T, key string, val []byte) bool) (T, error) {
	var v T
	if Members(line, func(key string, val []byte) error {
		if !member(&v, key, val) {
			return errUnusual
		}
		return nil
	}) == nil {
		return v, nil
	}
	var zero T
	v = zero
	err := json.Unmarshal(line, &v)
	return v, err
}

// MemberString reads a string value as Members hands it to its fn, one
// copy of each repeated string kept in in (nil: a copy each). Members
// hands out a string value only once it has found it plain (what Plain
// reads), so it is not checked again. ok is false for a value that is not
// a string.
func MemberString(val []byte, in *Interner) (string, bool) {
	if len(val) < 2 || val[0] != '"' {
		return "", false
	}
	if in == nil {
		return string(val[1 : len(val)-1]), true
	}
	return in.String(val[1 : len(val)-1]), true
}

// Plain reads a JSON string value with no escape in it, whose bytes are
// valid UTF-8 without control characters: the string is those bytes, as
// encoding/json reads them. ok is false for anything else.
func Plain(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || plainStringEnd(val, 0) != len(val) {
		return "", false
	}
	return string(val[1 : len(val)-1]), true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainStringEnd is the offset after the string starting at i, when it has
// no escape and no byte encoding/json would change; -1 otherwise.
func plainStringEnd(b []byte, i int) int {
	j := i + 1
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			if !utf8.Valid(b[i+1 : j]) {
				return -1
			}
			return j + 1
		case c == '\\' || c < 0x20:
			return -1
		}
		j++
	}
	return -1
}

// valueEnd is the offset after the JSON value starting at i (a plain
// string, a literal, a number, or an object or array whose strings may
// hold escapes), or -1 when it cannot tell; the value is checked only as
// far as delimiting it needs, so a caller that keeps it raw has
// encoding/json validate it where it must.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return plainStringEnd(b, i)
	case c == '{' || c == '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				for j++; j < len(b) && b[j] != '"'; j++ {
					if b[j] == '\\' {
						j++
					}
				}
				if j >= len(b) {
					return -1
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					if !json.Valid(b[i : j+1]) {
						return -1
					}
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		if lit := string(b[i:j]); lit != "true" && lit != "false" && lit != "null" && !IsNumber(b[i:j]) {
			return -1
		}
		return j
	}
}

// Int reads a JSON integer (no fraction, no exponent) as encoding/json
// reads one into an int.
func Int(val []byte) (int, bool) {
	if !IsNumber(val) || bytes.ContainsAny(val, ".eE") {
		return 0, false
	}
	n, err := strconv.Atoi(string(val))
	return n, err == nil
}

// Float reads a JSON number as encoding/json reads one into a float64.
func Float(val []byte) (float64, bool) {
	if !IsNumber(val) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(val), 64)
	return f, err == nil
}

// Time reads a JSON string holding a time as encoding/json reads one into
// a time.Time (RFC 3339).
func Time(val []byte) (time.Time, bool) {
	var t time.Time
	if len(val) == 0 || val[0] != '"' {
		return t, false
	}
	err := t.UnmarshalJSON(val)
	return t, err == nil
}

// Bool reads true or false.
func Bool(val []byte) (bool, bool) {
	switch string(val) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// IsNumber reports whether b is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func IsNumber[B ~string | ~[]byte](b B) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// Interner hands out one string per distinct value, up to a bound: a
// reader of many records whose strings repeat (a run's goal, its verdicts)
// keeps one copy of each. The zero value is ready to use.
type Interner struct{ m map[string]string }

// internMax bounds an Interner: past it, it starts afresh.
const internMax = 4096

// String is b as a string, the same string every time for the same bytes.
func (in *Interner) String(b []byte) string {
	if s, ok := in.m[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	if in.m == nil || len(in.m) >= internMax {
		in.m = make(map[string]string, 64)
	}
	in.m[s] = s
	return s
}

// PlainIn is Plain with the string from in.
func PlainIn(val []byte, in *Interner) (string, bool) {
	if in == nil {
		return Plain(val)
	}
	if len(val) < 2 || val[0] != '"' || plainStringEnd(val, 0) != len(val) {
		return "", false
	}
	return in.String(val[1 : len(val)-1]), true
}
