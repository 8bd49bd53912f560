package shell

import (
	"bytes"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// Secrets in what a command sends. A file that leaves the machine (an
// upload's body, a form's file, a copy to a remote) may carry a secret in
// its text: a token in the shape a service issues, a private key, a
// secret assigned to a name. Such a file sent out is a credential sent
// out, whatever its name. The shapes are the ones a pre-push secret
// scanner looks for; a line that says `# lb-secrets: allow` is a visible
// choice to keep what it holds, and is passed over. A finding names the
// kind of secret and the file, never the value.

// secretShape is one kind of secret: its name and its shape. near, when
// set, is a word (any case) that must follow the match on its line within
// nearSpan characters: a lookahead, which RE2 cannot say, checked by hand.
// A match holds one of hints (in lower case when fold): a text without
// any is not searched (a leading \b keeps RE2 from skipping ahead to a
// literal, and a file of a MiB has to be read within the gate's budget).
type secretShape struct {
	kind  string
	re    *regexp.Regexp
	near  string
	hints []string
	fold  bool
}

// nearSpan is how many characters may stand between a match and its near
// word.
const nearSpan = 40

// secretShapes are the kinds, in the order findings are listed.
var secretShapes = firstuse.Value[[]secretShape]{New: func() []secretShape {
	var out []secretShape
	for _, s := range []struct {
		kind, src, near string
		hints           []string
	}{
		{"telegram-bot-token", `\b\d{8,10}:AA[A-Za-z0-9_-]{30,}\b`, "", []string{":AA"}},
		{"openai", `\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b`, "", []string{"sk-"}},
		{"anthropic", `\bsk-ant-[A-Za-z0-9_-]{20,}\b`, "", []string{"sk-ant-"}},
		{"github-token", `\bgh[opsu]_[A-Za-z0-9]{20,}\b`, "", []string{"ghp_", "gho_", "ghs_", "ghu_"}},
		{"github-pat", `\bgithub_pat_[A-Za-z0-9_]{30,}\b`, "", []string{"github_pat_"}},
		{"aws-access-key", `\bAKIA[0-9A-Z]{16}\b`, "", []string{"AKIA"}},
		{"pypi-token", `\bpypi-[A-Za-z0-9_-]{20,}\b`, "", []string{"pypi-"}},
		{"slack-token", `\bxox[abprs]-[A-Za-z0-9-]{10,}\b`, "", []string{"xox"}},
		{"stripe-live", `\b[rs]k_live_[A-Za-z0-9]{20,}\b`, "", []string{"k_live_"}},
		{"google-api-key", `\bAIza[0-9A-Za-z_-]{35}\b`, "", []string{"AIza"}},
		{"private-key-block", `-----BEGIN (?:RSA |EC |OPENSSH |PGP )?PRIVATE KEY-----`, "", nil},
		{"jwt", `\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.`, "", []string{"eyJ"}},
		{"zenodo-ish", `\b[A-Za-z0-9]{50,64}\b`, "zenodo", []string{"zenodo"}},
		{"assigned-secret", `(?i)\b(?:api[_-]?key|secret|passwd|password|token|bearer)\b\s*[:=]\s*['"][^'"\s]{16,}['"]`, "",
			[]string{"api", "secret", "passwd", "password", "token", "bearer"}},
	} {
		fold := s.near != "" || strings.HasPrefix(s.src, "(?i)")
		out = append(out, secretShape{kind: s.kind, re: regexp.MustCompile(s.src), near: s.near, hints: s.hints, fold: fold})
	}
	return out
}}

// tokenShapes are the kinds of tokens services issue: the ones
// credential looks for in a command's own words.
var tokenShapes = firstuse.Value[[]secretShape]{New: func() []secretShape {
	var out []secretShape
	for _, s := range secretShapes.Get() {
		if s.near == "" && s.kind != "assigned-secret" {
			out = append(out, s)
		}
	}
	return out
}}

// allowLine is the pragma that passes a line over (compiled on first use,
// so that the gate's start-up builds no table it may not need).
var allowLine = firstuse.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`#\s*lb-secrets:\s*allow\b`)
}}

// Secrets is the kind of every secret in text, one per match in the order
// of the kinds, a match on a line that allows it passed over.
func Secrets(text string) []string {
	var kinds []string
	lower := strings.ToLower(text)
	for _, s := range secretShapes.Get() {
		if !s.hinted(text, lower) {
			continue
		}
		for _, m := range s.re.FindAllStringIndex(text, -1) {
			if s.near != "" && !nearAfter(text[m[1]:], s.near) || allowLine.Get().MatchString(lineAt(text, m[0])) {
				continue
			}
			kinds = append(kinds, s.kind)
		}
	}
	return kinds
}

// hinted: the text holds one of the shape's hints (or it has none).
func (s secretShape) hinted(text, lower string) bool {
	if s.fold {
		text = lower
	}
	return len(s.hints) == 0 || slices.ContainsFunc(s.hints, func(h string) bool { return strings.Contains(text, h) })
}

// nearAfter: word (any case) starts within nearSpan characters of the
// start of rest, on the same line.
func nearAfter(rest, word string) bool {
	for i, n := 0, 0; n <= nearSpan && i < len(rest); n++ {
		if len(rest)-i >= len(word) && strings.EqualFold(rest[i:i+len(word)], word) {
			return true
		}
		if rest[i] == '\n' {
			return false
		}
		_, size := utf8.DecodeRuneInString(rest[i:])
		i += size
	}
	return false
}

// lineAt is the line of text holding byte offset i.
func lineAt(text string, i int) string {
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		return text[start:]
	}
	return text[start : i+end]
}

// SecretText is a file's bytes as text the way a scanner reads it: bytes
// that are not UTF-8 dropped, line ends made "\n".
func SecretText(data []byte) string {
	s := strings.ToValidUTF8(string(data), "")
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// SecretSkipped: a file a secret scan of a tree passes over — one in a
// directory of tools, caches or build output, or one whose extension
// says it is an image, an archive, a font or recorded data.
func SecretSkipped(rel string) bool {
	for _, dir := range strings.Split(path.Dir(filepath.ToSlash(rel)), "/") {
		switch dir {
		case ".git", "node_modules", "__pycache__", ".venv", "venv", "dist", "build", ".next", "out", ".mypy_cache", ".pytest_cache":
			return true
		}
	}
	return binaryExt(rel)
}

// binaryExt: the file's extension says it holds no text a secret is
// written in.
func binaryExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".pdf", ".zip", ".gz", ".whl", ".mp4", ".woff", ".woff2", ".ico", ".eeg", ".fdt", ".set":
		return true
	}
	return false
}

// maxSecretFile bounds the file a command sends that the gate reads for
// secrets, and all such files of one command together: what it can scan
// within the analysis's time budget.
const maxSecretFile = MaxScriptFile

// sentSecret says which secret a file a command sends holds ("a secret of
// kind K in FILE"), "" when none or when the file cannot be read within
// the bounds (a binary's extension, not a regular file, too large).
func (a *analyzer) sentSecret(file arg) string {
	if !file.known || file.val == "" || file.val == "-" || binaryExt(file.val) {
		return ""
	}
	p, known := a.resolve(file)
	if !known || !filepath.IsAbs(p) {
		return ""
	}
	var text string
	if f, ok := a.files[p]; ok {
		if !f.known {
			return ""
		}
		text = f.text
	} else {
		data, ok := readBounded(p, maxSecretFile-a.secretBytes)
		if !ok {
			return ""
		}
		a.secretBytes += len(data)
		text = SecretText(data)
	}
	if kinds := Secrets(text); len(kinds) > 0 {
		return "a secret of kind " + kinds[0] + " in " + file.val
	}
	return ""
}

// readBounded reads a regular file of at most limit bytes.
func readBounded(p string, limit int) ([]byte, bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > int64(limit) {
		return nil, false
	}
	f, err := openNoBlock(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(io.LimitReader(f, int64(limit)+1)); err != nil || b.Len() > limit {
		return nil, false
	}
	return b.Bytes(), true
}
