package supervise

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/laserkit/laserkit/laserbrain"
	"github.com/laserkit/laserkit/operator/shell"
	"github.com/laserkit/laserkit/supercode/fleet"
)

// writeTools are the file tools whose recorded event names the file (the
// hooks record the path as the event's text).
var writeTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "write_file": true, "replace": true}

// shellTools run a command, recorded as the event's text.
var shellTools = map[string]bool{"Bash": true, "shell": true, "local_shell": true, "run_shell_command": true, "run_terminal_command": true}

// EventFiles is the footprint one recorded tool event leaves, relative to
// the repository: the file of a file tool; the files a shell command
// writes, and the existing files it names. Relative paths resolve against
// dir (the run's directory); files outside the repository, and its .git
// and .ponder, are left out.
func EventFiles(repo, dir string, e fleet.RunEvent) []string {
	return (&FileReader{}).EventFiles(repo, dir, e)
}

// FileReader is EventFiles for a reader of many events (a round, a
// report): it asks the file system once whether a path a command names is
// a file, however many commands name it, and reads an event that repeats
// one it read (the same tool on the same text in the same directory, with
// the same outcome: an agent runs its tests again and again) once.
type FileReader struct {
	isFile map[string]bool
	read   map[eventKey][]string
}

// eventKey is what EventFiles reads of an event.
type eventKey struct {
	repo, dir, tool, text string
	failed                bool
}

// EventFiles is the package's EventFiles, with the answers kept. The
// slice returned is shared with later answers: it is not to be changed.
func (fr *FileReader) EventFiles(repo, dir string, e fleet.RunEvent) []string {
	if e.Kind != fleet.KindTool || e.Text == "" {
		return nil
	}
	key := eventKey{repo, dir, e.Name, e.Text, e.OK.Failed()}
	if files, ok := fr.read[key]; ok {
		return files
	}
	files := fr.eventFiles(repo, dir, e)
	if fr.read == nil {
		fr.read = map[eventKey][]string{}
	}
	fr.read[key] = files
	return files
}

func (fr *FileReader) eventFiles(repo, dir string, e fleet.RunEvent) []string {
	var cands []string
	switch {
	case writeTools[e.Name]:
		cands = []string{e.Text}
	case shellTools[e.Name]:
		cmd := e.Text
		if i := strings.Index(cmd, " — "); i >= 0 && e.OK.Failed() {
			cmd = cmd[:i] // a failure's text ends with the error
		}
		for _, w := range shell.Analyze(cmd, dir).Writes {
			if w.Path != "" {
				cands = append(cands, w.Path)
			}
		}
		for _, w := range strings.Fields(cmd) {
			w = strings.Trim(w, `"'();|&<>`)
			if w == "" || strings.HasPrefix(w, "-") || strings.ContainsAny(w, "$*?`=") {
				continue
			}
			if fr.regular(abs(dir, w)) {
				cands = append(cands, w)
			}
		}
	default:
		return nil
	}
	var out []string
	for _, c := range cands {
		if rel, ok := inRepo(repo, abs(dir, c)); ok {
			out = append(out, rel)
		}
	}
	return out
}

// regular reports whether p is a regular file, asking once.
func (fr *FileReader) regular(p string) bool {
	if ok, known := fr.isFile[p]; known {
		return ok
	}
	info, err := os.Stat(p)
	ok := err == nil && info.Mode().IsRegular()
	if fr.isFile == nil {
		fr.isFile = map[string]bool{}
	}
	fr.isFile[p] = ok
	return ok
}

func abs(dir, p string) string {
	if filepath.IsAbs(p) || dir == "" {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// inRepo makes p relative to the repository, slash separated; ok is false
// for a path outside it (or .git, .ponder: the bookkeeping, not the work).
func inRepo(repo, p string) (string, bool) {
	rel, err := filepath.Rel(repo, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if first, _, _ := strings.Cut(rel, "/"); first == ".git" || first == ".ponder" {
		return "", false
	}
	return rel, true
}

// observedEvent is a recorded tool call as the catches read it: the tool,
// whether it worked, and what it returned.
func observedEvent(e fleet.RunEvent) (laserbrain.Event, bool) {
	if e.Kind != fleet.KindTool {
		return laserbrain.Event{}, false
	}
	ev := laserbrain.Event{Kind: laserbrain.EventTool, Name: e.Name, Text: e.Text, OK: e.OK}
	if len(e.Result) > 0 {
		d := json.NewDecoder(bytes.NewReader(e.Result))
		var v any
		if d.Decode(&v) == nil {
			ev.Result = v
		}
	} else {
		// Nothing was kept (too large, or not recorded): a result, not
		// "nothing came back" — an empty result would read as blind.
		ev.Result = "(not recorded)"
	}
	return ev, true
}

func itoa(n int) string { return strconv.Itoa(n) }
