package operator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/internal/fsx"
	"github.com/laserkit/laserkit/operator/shell"
)

// PolicyFile is where a project keeps its policy, relative to the
// repository's root. A person commits it; the agent cannot write it (it
// is protected outright).
const PolicyFile = ".laserbrain/policy.json"

// Policy is a project's policy for the gate, as a person committed it in
// .laserbrain/policy.json (the JSON Schema in operator/policyschema says
// what the file may hold), plus where it applies.
type Policy struct {
	// Allow rules let findings through that the gate would refuse or ask
	// about — never a person's command, never a place protected outright.
	Allow []AllowRule `json:"allow,omitempty"`
	// Protected are extra paths (relative to the repository root, or
	// absolute; a trailing / or not, globs allowed) the agent needs a
	// person's authorization to write.
	Protected []string `json:"protected,omitempty"`
	// Publishers are extra commands that publish or deploy: any command
	// whose words start with one is outward and irreversible.
	Publishers []Publisher `json:"publishers,omitempty"`
	// Coverage settings are carried for the coverage rules, which own
	// their meaning and defaults (nil or "": not set).
	Coverage Coverage `json:"coverage,omitempty"`
	// Boundary is carried for laserbrain run's boundary (supercode/confine),
	// which owns its meaning.
	Boundary Boundary `json:"boundary,omitempty"`
	// Undo settings are carried for the undo checkpoints (supercode/undo),
	// which own their meaning and defaults.
	Undo UndoSettings `json:"undo,omitempty"`
	// Telemetry is carried for laserbrain run's and supervise's export to
	// an OpenTelemetry collector (supercode/telemetry), which owns its
	// meaning.
	Telemetry TelemetrySettings `json:"telemetry,omitempty"`
	// Budgets are carried for laserbrain run's --max-tokens and --max-cost
	// (supercode/agentrun), which own their meaning: by agent name, "*"
	// for any agent not named.
	Budgets map[string]Budget `json:"budgets,omitempty"`

	// Source is the policy file's path ("" for the defaults), Root the
	// repository root its relative paths are read against.
	Source string `json:"-"`
	Root   string `json:"-"`
	// Home is the laserbrain home (its records are protected); TempDir
	// is what $TMPDIR in a path scope means. The loader's caller sets
	// Home; LoadPolicy sets TempDir from the environment.
	Home    string `json:"-"`
	TempDir string `json:"-"`
	// Own are directories in the laserbrain home the caller itself keeps
	// (a loop's journal, which its SCRIPT writes): not protected from it.
	Own []string `json:"-"`
	// Err says why the file is not valid (naming the JSON pointer); the
	// gate then refuses commands and file writes (Decide).
	Err string `json:"-"`
}

// AllowRule lets findings through, with its reason on the record. A rule
// names a command pattern (the command's words as the gate reads them; *
// matches any run of characters, ? one) or path scopes for deletions (rm
// -r, find -delete, rsync --delete of paths under one of them), or both
// (then both must hold).
type AllowRule struct {
	ID      string   `json:"id"`
	Reason  string   `json:"reason"`
	Command string   `json:"command,omitempty"`
	Deletes []string `json:"deletes,omitempty"`
}

// Publisher is an extra publishing or deploying command: its leading
// words, and the label its finding gets.
type Publisher struct {
	Command string `json:"command"`
	Label   string `json:"label,omitempty"`
}

// Coverage are the coverage settings of the project (branch coverage
// reads them).
type Coverage struct {
	Floor      *float64 `json:"floor,omitempty"`
	BlockAfter *int     `json:"block_after,omitempty"`
	NudgeEvery *int     `json:"nudge_every,omitempty"`
	Mode       string   `json:"mode,omitempty"`
}

// Boundary is what laserbrain run's kernel boundary opens beyond its
// defaults for an agent working in the project.
type Boundary struct {
	// Connect are the hosts the project reaches and sends to, the one list
	// of them (host:port, or *.domain:port), each with the reason on the
	// record: under laserbrain run the agent's tree may connect to each,
	// and everywhere the gate lets an upload, or a credential sent, to one
	// of their hosts go ahead (whatever the port; loopback is always this
	// machine). The policy's older top-level "hosts" names are read into
	// it, each at port 443 (HostsDeprecated).
	Connect []BoundaryRule `json:"connect,omitempty"`
	// Registries, false, closes the public package registries, which the
	// tree may read by default.
	Registries *bool `json:"registries,omitempty"`
	// PassEnv are credential variables, and PassPaths credential files or
	// directories (~ expanded), the tree gets although they hold
	// credentials.
	PassEnv   []string `json:"pass_env,omitempty"`
	PassPaths []string `json:"pass_paths,omitempty"`
	// Writable are more places the tree may write (relative to the
	// repository root, ~ expanded).
	Writable []string `json:"writable,omitempty"`
	// Act are commands laserbrain act carries out for the agent, outside
	// the boundary, without a person's authorization: each exactly as
	// written, white space collapsed.
	Act []BoundaryRule `json:"act,omitempty"`
}

// BoundaryRule is one endpoint (Connect) or command (Act) and why.
type BoundaryRule struct {
	ID       string `json:"id"`
	Reason   string `json:"reason"`
	Endpoint string `json:"endpoint,omitempty"`
	Command  string `json:"command,omitempty"`
}

// UndoSettings are the project's settings of the undo checkpoints taken
// before every call that may write (nil or empty: not set).
// TelemetrySettings are the project's OpenTelemetry export: the OTLP/HTTP
// endpoint (a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is) its runs and
// supervisors send to when the environment names none.
type TelemetrySettings struct {
	Endpoint string `json:"endpoint,omitempty"`
}

// Budget is what one agent's run may spend (zero fields: no limit).
type Budget struct {
	MaxTokens  int64   `json:"max_tokens,omitempty"`
	MaxCostUSD float64 `json:"max_cost_usd,omitempty"`
}

// BudgetOf is the budget the policy sets for agent: its own, else "*"'s;
// ok is false when it sets neither.
func (p Policy) BudgetOf(agent string) (Budget, bool) {
	if b, ok := p.Budgets[agent]; ok {
		return b, true
	}
	b, ok := p.Budgets["*"]
	return b, ok
}

type UndoSettings struct {
	// Include are ignored paths (relative to the repository root) a
	// checkpoint records beside the work tree: a database, say.
	Include []string `json:"include,omitempty"`
	// LossFiles and LossBytes: a call that deletes or overwrites more
	// files, or more bytes, is reported to the supervisor.
	LossFiles *int   `json:"loss_files,omitempty"`
	LossBytes *int64 `json:"loss_bytes,omitempty"`
	// KeepRuns and KeepDays bound how long a work tree's checkpoints are
	// kept: the last KeepRuns runs', none older than KeepDays.
	KeepRuns *int `json:"keep_runs,omitempty"`
	KeepDays *int `json:"keep_days,omitempty"`
}

// policyDocument is the file as written.
type policyDocument struct {
	Version    int               `json:"version"`
	Allow      []AllowRule       `json:"allow"`
	Protected  []string          `json:"protected"`
	Publishers []Publisher       `json:"publishers"`
	Hosts      []string          `json:"hosts"`
	Boundary   Boundary          `json:"boundary"`
	Coverage   Coverage          `json:"coverage"`
	Undo       UndoSettings      `json:"undo"`
	Telemetry  TelemetrySettings `json:"telemetry"`
	Budgets    map[string]Budget `json:"budgets"`
}

// PolicyValidator checks a policy file's bytes against the schema before
// they are decoded (operator/policyschema.Validate); its error names the
// JSON pointer of what is wrong.
type PolicyValidator func(data []byte) error

// ErrPolicyUnchecked is what a validator returns when it cannot check the
// file itself (the lean gate, which links no schema validator, before
// laserbrain has checked these bytes): the caller hands the call to one
// that can.
var ErrPolicyUnchecked = errors.New("the project policy has not been checked against its schema yet")

// maxPolicyFile bounds what the loader reads.
const maxPolicyFile = 256 << 10

// PolicyRoot is the repository root for a directory: the nearest one up
// that holds .git ("" when there is none).
func PolicyRoot(dir string) string {
	if dir == "" {
		return ""
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// LoadPolicy reads the policy of the repository containing dir: the
// defaults when it has no policy file (or dir is in no repository), else
// the file, checked by validate and decoded. A file that cannot be read,
// fails the schema or decodes wrongly gives a Policy whose Err says why;
// ErrPolicyUnchecked is returned as is (the caller delegates).
func LoadPolicy(dir string, validate PolicyValidator) (Policy, error) {
	pol := Policy{TempDir: os.Getenv("TMPDIR")}
	if pol.TempDir == "" {
		pol.TempDir = os.TempDir()
	}
	root := PolicyRoot(dir)
	if root == "" {
		return pol, nil
	}
	pol.Root = root
	file := filepath.Join(root, PolicyFile)
	fi, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return pol, nil
	case err != nil:
		pol.Source, pol.Err = file, "it cannot be read: "+fsx.WithoutPath(err).Error()
		return pol, nil
	case !fi.Mode().IsRegular():
		pol.Source, pol.Err = file, "it is not a regular file"
		return pol, nil
	case fi.Size() > maxPolicyFile:
		pol.Source, pol.Err = file, fmt.Sprintf("it is larger than %d KiB", maxPolicyFile>>10)
		return pol, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		pol.Source, pol.Err = file, "it cannot be read: "+fsx.WithoutPath(err).Error()
		return pol, nil
	}
	p, err := ParsePolicy(data, validate)
	if errors.Is(err, ErrPolicyUnchecked) {
		return pol, err
	}
	p.Root, p.Source, p.TempDir = root, file, pol.TempDir
	if err != nil {
		p = Policy{Root: root, Source: file, TempDir: pol.TempDir, Err: err.Error()}
	}
	return p, nil
}

// ParsePolicy checks a policy file's bytes with validate (the schema) and
// decodes them.
func ParsePolicy(data []byte, validate PolicyValidator) (Policy, error) {
	if validate == nil {
		return Policy{}, ErrPolicyUnchecked
	}
	if err := validate(data); err != nil {
		return Policy{}, err
	}
	var doc policyDocument
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return Policy{}, fmt.Errorf("at the top: %v", err)
	}
	b := doc.Boundary
	for _, h := range doc.Hosts {
		b.Connect = append(b.Connect, BoundaryRule{ID: HostsRuleID, Reason: HostsDeprecated, Endpoint: h + ":443"})
	}
	return Policy{Allow: doc.Allow, Protected: doc.Protected, Publishers: doc.Publishers, Coverage: doc.Coverage, Boundary: b, Undo: doc.Undo,
		Telemetry: doc.Telemetry, Budgets: doc.Budgets}, nil
}

// HostsRuleID is the id of a boundary.connect rule read from the policy's
// older top-level "hosts", and HostsDeprecated its reason, which says what
// to write instead.
const (
	HostsRuleID     = "hosts"
	HostsDeprecated = `named in the policy's top-level "hosts", which is deprecated: name it in "boundary" "connect" with its port and a reason`
)

// ConnectHost is the host of a boundary.connect endpoint ("host:port",
// "*.domain:port", "[v6]:port"), lower case; "" when it names none.
func ConnectHost(endpoint string) string {
	i := strings.LastIndexByte(endpoint, ':')
	if i <= 0 {
		return ""
	}
	return strings.ToLower(strings.Trim(endpoint[:i], "[]"))
}

// resolveScope is where a path of the policy lies: $TMPDIR (and ${TMPDIR})
// is the temporary directory, ~ the home, a relative path is under the
// repository root.
func (pol Policy) resolveScope(s string) string {
	for _, v := range []string{"$TMPDIR", "${TMPDIR}"} {
		if rest, ok := strings.CutPrefix(s, v); ok {
			if pol.TempDir == "" {
				return ""
			}
			s = pol.TempDir + rest
		}
	}
	if s == "~" || strings.HasPrefix(s, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		s = home + s[1:]
	}
	if !filepath.IsAbs(s) {
		if pol.Root == "" {
			return ""
		}
		s = filepath.Join(pol.Root, s)
	}
	s = filepath.Clean(s)
	if r := shell.ResolveLinks(s); r != "" {
		s = r
	}
	return s
}

// covers says, for each finding, which allow rule lets it through
// ("id: reason"), or "". A rule covers a finding when every command it
// came from matches the rule's command pattern and every path it deletes
// lies under one of the rule's scopes; a grammar match is covered when
// every command the parsed view found it in is. A person's command, and a
// finding found in no command (data, an unreadable command), is never
// covered.
func (pol Policy) covers(an shell.Analysis, findings []shell.Finding) []string {
	out := make([]string, len(findings))
	for i, f := range findings {
		if f.PersonOnly || f.CarvedOut {
			continue
		}
		if h := pol.host(f.Host); h != "" {
			out[i] = "hosts: " + h + " is a host the project sends data to"
			continue
		}
		origins := an.Origins(f)
		if len(origins) == 0 {
			continue
		}
		for _, r := range pol.Allow {
			if pol.ruleCovers(r, origins) {
				out[i] = r.ID + ": " + r.Reason
				break
			}
		}
	}
	return out
}

// host is the policy's host pattern that host (a finding's) matches, "".
func (pol Policy) host(host string) string {
	if host == "" {
		return ""
	}
	host = strings.ToLower(host)
	for _, r := range pol.Boundary.Connect {
		h := ConnectHost(r.Endpoint)
		suffix, wild := strings.CutPrefix(h, "*.")
		if h != "" && (host == h || wild && strings.HasSuffix(host, "."+suffix)) {
			return h
		}
	}
	return ""
}

func (pol Policy) ruleCovers(r AllowRule, origins []shell.Origin) bool {
	if r.Command == "" && len(r.Deletes) == 0 {
		return false
	}
	for _, o := range origins {
		if o.Command == "" {
			return false
		}
		if r.Command != "" && !wildcard(r.Command, o.Command) {
			return false
		}
		if len(r.Deletes) > 0 {
			if o.UnknownPath || len(o.Paths) == 0 {
				return false
			}
			for _, p := range o.Paths {
				if !pol.underScope(p, r.Deletes) {
					return false
				}
			}
		}
	}
	return true
}

// underScope: a deleted path (a pattern's fixed part, for a glob) lies in
// one of the scopes, the scope itself included.
func (pol Policy) underScope(p string, scopes []string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	p = filepath.Clean(p)
	fixed := p
	if strings.ContainsAny(p, "*?[") {
		parts := strings.Split(filepath.ToSlash(p), "/")
		for i, part := range parts {
			if strings.ContainsAny(part, "*?[") {
				fixed = strings.Join(parts[:i], "/")
				if fixed == "" {
					fixed = "/"
				}
				// The pattern matches names inside fixed: fixed itself
				// must be a scope or inside one.
				break
			}
		}
	} else {
		fixed = shell.ResolveLinks(p)
	}
	for _, s := range scopes {
		scope := pol.resolveScope(s)
		if scope == "" {
			continue
		}
		if _, ok := inside(filepath.ToSlash(fixed), filepath.ToSlash(scope)); ok {
			return true
		}
	}
	return false
}

// inside: p is base or inside it; rel is p relative to base.
func inside(p, base string) (string, bool) {
	if p == base {
		return ".", true
	}
	if strings.HasPrefix(p, strings.TrimSuffix(base, "/")+"/") {
		return strings.TrimPrefix(p, strings.TrimSuffix(base, "/")+"/"), true
	}
	return "", false
}

// wildcard matches text against a pattern where * is any run of
// characters and ? one character; blanks in either are collapsed.
func wildcard(pattern, text string) bool {
	pattern = strings.Join(strings.Fields(pattern), " ")
	text = strings.Join(strings.Fields(text), " ")
	var match func(p, t string) bool
	match = func(p, t string) bool {
		for len(p) > 0 {
			switch p[0] {
			case '*':
				for len(p) > 0 && p[0] == '*' {
					p = p[1:]
				}
				if p == "" {
					return true
				}
				for i := 0; i <= len(t); i++ {
					if match(p, t[i:]) {
						return true
					}
				}
				return false
			case '?':
				if t == "" {
					return false
				}
				p, t = p[1:], t[1:]
			default:
				if t == "" || p[0] != t[0] {
					return false
				}
				p, t = p[1:], t[1:]
			}
		}
		return t == ""
	}
	return match(pattern, text)
}

// publisherFindings are the policy's extra publishers found among the
// commands the analysis read: each an outward finding in the role its
// command runs in (a help request changes nothing).
func (pol Policy) publisherFindings(an shell.Analysis) []shell.Finding {
	var out []shell.Finding
	for _, pub := range pol.Publishers {
		words := strings.Fields(pub.Command)
		if len(words) == 0 {
			continue
		}
		for _, r := range an.Ran() {
			got := strings.Fields(r.Text)
			if len(got) < len(words) || !equalWords(got[:len(words)], words) {
				continue
			}
			label := pub.Label
			if label == "" {
				label = pub.Command + " (publishes, says the project policy)"
			}
			f := shell.Finding{Label: "policy: " + label, Outward: true, Where: r.Where, Command: r.Text}
			if r.Inert {
				f.Where, f.Note = shell.DryRun, "a help request: changes nothing"
			}
			out = append(out, f)
			break
		}
	}
	return out
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ActRule is the policy's act rule that lets laserbrain act carry out
// exactly action (an action key: ActionKey, CommandKey) without a
// person's authorization.
func (b Boundary) ActRule(action string) (BoundaryRule, bool) {
	for _, r := range b.Act {
		if ActionKey(r.Command) == action {
			return r, true
		}
	}
	return BoundaryRule{}, false
}
