package loop

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/shell"
	"mvdan.cc/sh/v3/syntax"
)

// Service kinds.
const (
	KindClaude  = "claude"  // the Claude Code CLI (-p), with our hooks and MCP server
	KindCommand = "command" // any command: instruction as its last argument, context on stdin
	// KindMessages is a judge the loop itself asks through the Messages
	// API (_BASE_URL, _API_KEY, _MODEL), with read-only tools.
	KindMessages = "messages"
)

// Service is one agents.conf service: any service may serve as agent or
// judge.
type Service struct {
	Name    string
	Enabled string   // YES, MANUAL or NO
	Kind    string   // KindClaude, KindCommand or KindMessages
	Command []string // command kind: the argv; claude kind: the CLI and extra flags (default "claude")
	Tools   []string // space-split _TOOLS; nil when unset
	Model   string
	Prompt  []string // prompt files (absolute)
	System  string
	Desc    string
	Display string // _NAME
	// MaxTokens, BaseURL, APIKey, Thinking, AutoCompact are passed to the
	// service (see doc.go); Skills is read and not used.
	MaxTokens, BaseURL, APIKey, Thinking, AutoCompact, Skills string
	Aliases                                                   []string
	// builtinPrompt is the embedded prompt a starter service uses when
	// _PROMPT is unset.
	builtinPrompt string
	set           map[string]bool // fields given explicitly
}

// HasTool reports whether the service's _TOOLS names tool.
func (s *Service) HasTool(tool string) bool {
	for _, t := range s.Tools {
		if t == tool {
			return true
		}
	}
	return false
}

// Config is a parsed agents.conf over the starter services.
type Config struct {
	Path         string // "" when only the starter configuration is used
	Services     map[string]*Service
	DefaultAgent string
	aliases      map[string]string
}

//go:embed prompts/*.md
var prompts embed.FS

func builtinPrompt(name string) string {
	b, err := prompts.ReadFile("prompts/" + name + ".md")
	if err != nil {
		panic(err) // embedded; a test reads every one
	}
	return string(b)
}

// fields are the service fields agents.conf knows, longest first so that
// "fix_MAX_TOKENS" splits as fix + MAX_TOKENS.
var fields = []string{"AUTO_COMPACT", "MAX_TOKENS", "BASE_URL", "API_KEY", "ENABLED", "COMMAND", "ALIASES",
	"INHERIT", "THINKING", "PROMPT", "SYSTEM", "SKILLS", "MODEL", "TOOLS", "KIND", "DESC", "NAME"}

// Starter returns the starter services: fix and task
// agents, a judge with read-only tools plus verdict, all Claude Code.
func Starter() *Config {
	c := &Config{Services: map[string]*Service{}, aliases: map[string]string{}}
	for _, s := range []*Service{
		{Name: "fix", Tools: strings.Fields("bash edit read search git_status git_diff escalate"),
			Desc: "Repairer: lands fresh with a failing CI log on stdin."},
		{Name: "task", Tools: strings.Fields("bash edit read search git_status git_diff escalate"),
			Desc: "Worker: lands fresh with the judge's work order on stdin."},
		{Name: "judge", Tools: strings.Fields("read search git_diff verdict escalate"),
			Desc: "Examiner: read-only tools plus the mandated verdict."},
	} {
		s.Enabled, s.Kind, s.builtinPrompt = "YES", KindClaude, builtinPrompt(s.Name)
		s.set = map[string]bool{}
		c.Services[s.Name] = s
	}
	return c
}

// LoadConfig reads agents.conf at path over the starter services. path ""
// reads ./agents.conf in dir when there is one. The file is parsed as
// shell: only assignments (NAME=value) and comments, values expanded as
// the shell would (variables from the environment and earlier lines),
// never a command.
func LoadConfig(path, dir string) (*Config, error) {
	c := Starter()
	if path == "" {
		p := filepath.Join(dir, "agents.conf")
		if _, err := os.Stat(p); err != nil {
			return c, nil
		}
		path = p
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("agents config: %w", err)
	}
	c.Path = abs
	if err := c.parse(abs, string(data)); err != nil {
		return nil, err
	}
	return c, nil
}

type configEnv struct {
	vars map[string]string
}

func (e *configEnv) Get(name string) expand.Variable {
	if v, ok := e.vars[name]; ok {
		return expand.Variable{Set: true, Kind: expand.String, Str: v}
	}
	if v, ok := os.LookupEnv(name); ok {
		return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: v}
	}
	return expand.Variable{}
}

func (e *configEnv) Each(f func(name string, vr expand.Variable) bool) {
	for k, v := range e.vars {
		if !f(k, expand.Variable{Set: true, Kind: expand.String, Str: v}) {
			return
		}
	}
}

func (c *Config) parse(path, text string) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangPOSIX)).Parse(strings.NewReader(text), path)
	if err != nil {
		return fmt.Errorf("agents config: %w", err)
	}
	env := &configEnv{vars: map[string]string{}}
	cfg := &expand.Config{Env: env} // no CmdSubst: a command substitution is an error
	values := map[string]map[string]string{}
	var order []string
	for _, st := range f.Stmts {
		pos := fmt.Sprintf("%s:%d", path, st.Pos().Line())
		call, ok := st.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) > 0 || len(call.Assigns) == 0 || st.Negated || st.Background || len(st.Redirs) > 0 {
			return fmt.Errorf("agents config %s: only NAME=\"value\" assignments are allowed, not commands", pos)
		}
		for _, as := range call.Assigns {
			if as.Append || as.Array != nil || as.Index != nil || as.Naked {
				return fmt.Errorf("agents config %s: %s: only plain NAME=\"value\" assignments are allowed", pos, as.Name.Value)
			}
			val := ""
			if as.Value != nil {
				val, err = expand.Literal(cfg, as.Value)
				if err != nil {
					var uc expand.UnexpectedCommandError
					if errors.As(err, &uc) {
						return fmt.Errorf("agents config %s: %s: command substitution is not allowed in agents.conf", pos, as.Name.Value)
					}
					return fmt.Errorf("agents config %s: %s: %w", pos, as.Name.Value, err)
				}
			}
			name := as.Name.Value
			env.vars[name] = val
			if name == "DEFAULT_AGENT" {
				c.DefaultAgent = strings.TrimSpace(val)
				continue
			}
			svc, field, err := splitName(name)
			if err != nil {
				return fmt.Errorf("agents config %s: %w", pos, err)
			}
			if svc == "" {
				continue // a helper variable for later lines
			}
			if values[svc] == nil {
				values[svc] = map[string]string{}
				order = append(order, svc)
			}
			values[svc][field] = val
		}
	}
	dir := filepath.Dir(path)
	for _, name := range order {
		if err := c.apply(name, values[name], dir); err != nil {
			return fmt.Errorf("agents config %s: %w", path, err)
		}
	}
	for _, name := range order {
		if err := c.inherit(name, values, map[string]bool{}); err != nil {
			return fmt.Errorf("agents config %s: %w", path, err)
		}
	}
	return c.finish()
}

// splitName splits <service>_<FIELD>. A name with no lower-case service
// part is a helper variable (svc ""); a lower-case prefix with an unknown
// field is a mistake, said so.
func splitName(name string) (svc, field string, err error) {
	for _, f := range fields {
		if p, ok := strings.CutSuffix(name, "_"+f); ok && p != "" {
			if !validService(p) {
				return "", "", fmt.Errorf("%s: service names are lower-case letters, digits and _ (got %q)", name, p)
			}
			return p, f, nil
		}
	}
	if i := strings.LastIndexByte(name, '_'); i > 0 && strings.IndexFunc(name[:i], unicode.IsLower) >= 0 {
		return "", "", fmt.Errorf("%s: unknown field %s (known: %s)", name, name[i+1:], strings.Join(sortedFields(), ", "))
	}
	return "", "", nil
}

func sortedFields() []string {
	out := append([]string{}, fields...)
	sort.Strings(out)
	return out
}

func validService(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || (i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// apply sets one service's explicit fields, over a starter service of the
// same name when there is one.
func (c *Config) apply(name string, v map[string]string, dir string) error {
	s := c.Services[name]
	if s == nil {
		s = &Service{Name: name, Enabled: "NO", Kind: KindClaude, set: map[string]bool{}}
		c.Services[name] = s
	}
	for f, val := range v {
		s.set[f] = true
		switch f {
		case "ENABLED":
			switch strings.ToUpper(strings.TrimSpace(val)) {
			case "YES", "TRUE", "ON", "1":
				s.Enabled = "YES"
			case "NO", "FALSE", "OFF", "0":
				s.Enabled = "NO"
			case "MANUAL":
				s.Enabled = "MANUAL"
			default:
				return fmt.Errorf("%s_ENABLED=%q: want YES, MANUAL or NO", name, val)
			}
		case "KIND":
			k := strings.TrimSpace(val)
			if k != KindClaude && k != KindCommand && k != KindMessages {
				return fmt.Errorf("%s_KIND=%q: want %s, %s or %s", name, val, KindClaude, KindCommand, KindMessages)
			}
			s.Kind = k
		case "COMMAND":
			argv, err := shell.Fields(val, func(string) string { return "" })
			if err != nil {
				return fmt.Errorf("%s_COMMAND: %w", name, err)
			}
			s.Command = argv
		case "TOOLS":
			s.Tools = strings.Fields(val)
		case "MODEL":
			s.Model = strings.TrimSpace(val)
		case "PROMPT":
			s.Prompt = nil
			for _, p := range strings.Split(val, ":") {
				if p = strings.TrimSpace(p); p == "" {
					continue
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(dir, p)
				}
				if _, err := os.Stat(p); err != nil {
					return fmt.Errorf("%s_PROMPT: %w", name, err)
				}
				s.Prompt = append(s.Prompt, p)
			}
		case "SYSTEM":
			s.System = val
		case "DESC":
			s.Desc = val
		case "NAME":
			s.Display = val
		case "MAX_TOKENS":
			s.MaxTokens = strings.TrimSpace(val)
		case "BASE_URL":
			s.BaseURL = strings.TrimSpace(val)
		case "API_KEY":
			s.APIKey = strings.TrimSpace(val)
		case "THINKING":
			s.Thinking = strings.TrimSpace(val)
		case "AUTO_COMPACT":
			s.AutoCompact = strings.TrimSpace(val)
		case "SKILLS":
			s.Skills = val
		case "ALIASES":
			s.Aliases = strings.Fields(val)
		}
	}
	return nil
}

// inherit fills the fields a service did not set from its _INHERIT base
// (recursively; a cycle is an error).
func (c *Config) inherit(name string, values map[string]map[string]string, seen map[string]bool) error {
	base := strings.TrimSpace(values[name]["INHERIT"])
	if base == "" {
		return nil
	}
	if seen[name] {
		return fmt.Errorf("%s_INHERIT: inheritance cycle through %s", name, name)
	}
	seen[name] = true
	b := c.Services[base]
	if b == nil {
		return fmt.Errorf("%s_INHERIT=%q: no such service", name, base)
	}
	if err := c.inherit(base, values, seen); err != nil {
		return err
	}
	s := c.Services[name]
	copyUnset := func(f string, dst, src any) {
		if s.set[f] {
			return
		}
		switch d := dst.(type) {
		case *string:
			*d = *src.(*string)
		case *[]string:
			*d = append([]string(nil), *src.(*[]string)...)
		}
	}
	copyUnset("ENABLED", &s.Enabled, &b.Enabled)
	copyUnset("KIND", &s.Kind, &b.Kind)
	copyUnset("COMMAND", &s.Command, &b.Command)
	copyUnset("TOOLS", &s.Tools, &b.Tools)
	copyUnset("MODEL", &s.Model, &b.Model)
	copyUnset("PROMPT", &s.Prompt, &b.Prompt)
	copyUnset("SYSTEM", &s.System, &b.System)
	copyUnset("MAX_TOKENS", &s.MaxTokens, &b.MaxTokens)
	copyUnset("BASE_URL", &s.BaseURL, &b.BaseURL)
	copyUnset("API_KEY", &s.APIKey, &b.APIKey)
	copyUnset("THINKING", &s.Thinking, &b.Thinking)
	copyUnset("AUTO_COMPACT", &s.AutoCompact, &b.AutoCompact)
	if !s.set["PROMPT"] && s.builtinPrompt == "" {
		s.builtinPrompt = b.builtinPrompt
	}
	return nil
}

func (c *Config) finish() error {
	for name, s := range c.Services {
		if s.Kind == KindCommand && len(s.Command) == 0 {
			return fmt.Errorf("agents config %s: service %s is %s_KIND=command but has no %s_COMMAND", c.Path, name, name, name)
		}
		if err := s.checkMessages(); err != nil {
			return fmt.Errorf("agents config %s: %w", c.Path, err)
		}
		for _, a := range s.Aliases {
			if other, ok := c.aliases[a]; ok && other != name {
				return fmt.Errorf("agents config %s: alias %s names both %s and %s", c.Path, a, other, name)
			}
			if _, ok := c.Services[a]; ok && a != name {
				return fmt.Errorf("agents config %s: alias %s of %s is also a service", c.Path, a, name)
			}
			c.aliases[a] = name
		}
	}
	if c.DefaultAgent != "" {
		if _, err := c.Lookup(c.DefaultAgent); err != nil {
			return fmt.Errorf("agents config %s: DEFAULT_AGENT: %w", c.Path, err)
		}
	}
	return nil
}

// Lookup finds a service by name or alias.
func (c *Config) Lookup(name string) (*Service, error) {
	if s, ok := c.Services[name]; ok {
		return s, nil
	}
	if n, ok := c.aliases[name]; ok {
		return c.Services[n], nil
	}
	var names []string
	for n := range c.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	where := "the starter configuration"
	if c.Path != "" {
		where = c.Path
	}
	return nil, fmt.Errorf("no service %q in %s (have %s)", name, where, strings.Join(names, ", "))
}

// CheckRole reports why a service cannot serve in a role, before any call
// is made: it is disabled, or a judge without `verdict` in its tools.
func (s *Service) CheckRole(role string) error {
	if s.Enabled == "NO" {
		return fmt.Errorf("service %s is not enabled (set %s_ENABLED=\"YES\")", s.Name, s.Name)
	}
	if role == roleAgent && s.Kind == KindMessages {
		return fmt.Errorf("service %s is %s_KIND=messages: it can only judge (an agent needs a client that edits the tree)", s.Name, s.Name)
	}
	if role == roleJudge && !s.HasTool("verdict") {
		return fmt.Errorf("service %s cannot judge: %s_TOOLS has no verdict (a judge must answer through the verdict tool)", s.Name, s.Name)
	}
	return nil
}

// Executable is the program the service runs: the first word of
// _COMMAND, else, for a claude service, claude.
func (s *Service) Executable() string {
	if len(s.Command) > 0 {
		return s.Command[0]
	}
	if s.Kind == KindClaude {
		return "claude"
	}
	return ""
}

// checkExecutable reports a service whose program cannot be found from dir
// with env's PATH (a relative path is taken from dir): a config error,
// found before the service is called.
func (s *Service) checkExecutable(dir string, env []string) error {
	if s.Kind == KindMessages {
		return nil // the loop itself is its client
	}
	bin := s.Executable()
	if bin == "" {
		return fmt.Errorf("service %s has no %s_COMMAND", s.Name, s.Name)
	}
	if _, err := lookPath(dir, env, bin); err != nil {
		how := fmt.Sprintf("check %s_COMMAND in agents.conf", s.Name)
		if s.Kind == KindClaude && len(s.Command) == 0 {
			how = fmt.Sprintf("install Claude Code, or set %s_COMMAND, or %s_KIND=command, in agents.conf", s.Name, s.Name)
		}
		why := fmt.Sprintf("its program %q is not found on PATH", bin)
		if strings.Contains(bin, "/") {
			why = fmt.Sprintf("its program %s cannot be run: %v", bin, err)
		}
		return fmt.Errorf("service %s cannot be started: %s (%s)", s.Name, why, how)
	}
	return nil
}

// systemPrompt is the service's own prompt text: its _PROMPT files (or the
// starter prompt), then _SYSTEM.
func (s *Service) systemPrompt() (string, error) {
	var parts []string
	if len(s.Prompt) == 0 && s.builtinPrompt != "" {
		parts = append(parts, strings.TrimSpace(s.builtinPrompt))
	}
	for _, p := range s.Prompt {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("service %s: prompt file: %w", s.Name, err)
		}
		parts = append(parts, strings.TrimSpace(string(b)))
	}
	if strings.TrimSpace(s.System) != "" {
		parts = append(parts, strings.TrimSpace(s.System))
	}
	return strings.Join(parts, "\n\n"), nil
}

// apiKey reads _API_KEY, following file:// to a file's first line.
func (s *Service) apiKey() (string, error) {
	p, ok := strings.CutPrefix(s.APIKey, "file://")
	if !ok {
		return s.APIKey, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("service %s: %s_API_KEY: %w", s.Name, s.Name, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}

// claudeTools maps _TOOLS names to Claude Code's: the built-in tools the
// session gets (--tools) and the calls it may make unasked (--allowedTools).
// Names we do not know pass through as Claude Code tool names (WebFetch,
// mcp__server__tool, Bash(npm test:*)).
func claudeTools(tools []string) (builtin, allowed []string) {
	add := func(list *[]string, names ...string) {
		for _, n := range names {
			dup := false
			for _, x := range *list {
				dup = dup || x == n
			}
			if !dup {
				*list = append(*list, n)
			}
		}
	}
	for _, t := range tools {
		switch t {
		case "bash":
			add(&builtin, "Bash")
			add(&allowed, "Bash")
		case "edit":
			add(&builtin, "Edit", "Write", "MultiEdit", "NotebookEdit")
			add(&allowed, "Edit", "Write", "MultiEdit", "NotebookEdit")
		case "read":
			add(&builtin, "Read")
			add(&allowed, "Read")
		case "search":
			add(&builtin, "Grep", "Glob")
			add(&allowed, "Grep", "Glob")
		case "git_status":
			add(&builtin, "Bash")
			add(&allowed, "Bash(git status:*)")
		case "git_diff":
			add(&builtin, "Bash")
			add(&allowed, "Bash(git diff:*)", "Bash(git log:*)", "Bash(git show:*)")
		case "verdict":
			add(&allowed, "mcp__laserbrain__verdict")
		case "escalate":
			add(&allowed, "mcp__laserbrain__escalate")
		default:
			if strings.HasPrefix(t, "mcp__") {
				add(&allowed, t)
				continue
			}
			name, _, _ := strings.Cut(t, "(")
			add(&builtin, name)
			add(&allowed, t)
		}
	}
	return builtin, allowed
}

// checkMessages reports a messages service without a model, or naming a
// tool it cannot have (it offers read-only tools besides verdict and
// escalate).
func (s *Service) checkMessages() error {
	if s.Kind != KindMessages {
		return nil
	}
	if s.Model == "" {
		return fmt.Errorf("service %s is %s_KIND=messages but has no %s_MODEL", s.Name, s.Name, s.Name)
	}
	for _, t := range s.Tools {
		if !slices.Contains(messagesTools, t) {
			return fmt.Errorf("service %s is %s_KIND=messages: %s_TOOLS names %s (a messages judge has %s)", s.Name, s.Name, s.Name, t, strings.Join(messagesTools, ", "))
		}
	}
	return nil
}
