package install

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/supercode/client"
)

// Reach is what a client needs from inside laserbrain run's boundary to
// do its work: the variables holding the credential it reaches its model
// with, the model endpoints it is configured for (URLs or host:port), and
// the directories it keeps its own state in. Nothing else of the user's
// credentials, network or home is open to it there.
type Reach struct {
	Env       []string
	Endpoints []string
	State     []string
}

// ModelEnv are the variables each client reads its model's credential
// from (besides its own state directory, where a login keeps one):
//
//	claude    ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN
//	codex     OPENAI_API_KEY, CODEX_API_KEY, and its provider's env_key
//	gemini    GEMINI_API_KEY, GOOGLE_API_KEY
//	qwen      OPENAI_API_KEY, DASHSCOPE_API_KEY
//	opencode  ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, GEMINI_API_KEY,
//	          GOOGLE_GENERATIVE_AI_API_KEY
//	cline     (its login, in ~/.cline)
//	copilot   COPILOT_PROVIDER_API_KEY, COPILOT_GITHUB_TOKEN, GH_TOKEN, GITHUB_TOKEN
func ModelEnv(n client.Name) []string {
	switch n {
	case client.Claude:
		return []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}
	case client.Codex:
		return []string{"OPENAI_API_KEY", "CODEX_API_KEY"}
	case client.Gemini:
		return []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}
	case client.Qwen:
		return []string{"OPENAI_API_KEY", "DASHSCOPE_API_KEY"}
	case client.OpenCode:
		return []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"}
	case client.Copilot:
		return []string{"COPILOT_PROVIDER_API_KEY", "COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"}
	}
	return nil
}

// defaultEndpoints are each client's model service when nothing in its
// configuration names another.
func defaultEndpoints(n client.Name) []string {
	switch n {
	case client.Claude:
		return []string{"api.anthropic.com:443"}
	case client.Codex:
		return []string{"api.openai.com:443", "chatgpt.com:443"}
	case client.Gemini:
		return []string{"generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443"}
	case client.Qwen:
		return []string{"dashscope.aliyuncs.com:443", "portal.qwen.ai:443", "chat.qwen.ai:443"}
	case client.OpenCode:
		return []string{"api.anthropic.com:443", "api.openai.com:443", "openrouter.ai:443", "models.dev:443"}
	case client.Cline:
		return []string{"api.cline.bot:443"}
	case client.Copilot:
		return []string{"api.githubcopilot.com:443", "api.individual.githubcopilot.com:443", "api.github.com:443"}
	}
	return nil
}

// ReachOf is client n's Reach for a project in dir and the user's home,
// as its configuration and getenv say.
func ReachOf(n client.Name, dir, home string, getenv func(string) string) Reach {
	o := Options{Client: n, Dir: dir, Home: home, Getenv: getenv}
	r := Reach{Env: ModelEnv(n)}
	env := func(names ...string) {
		for _, k := range names {
			if v := strings.TrimSpace(getenv(k)); v != "" {
				r.Endpoints = append(r.Endpoints, v)
			}
		}
	}
	switch n {
	case client.Claude:
		env("ANTHROPIC_BASE_URL")
		cfg := getenv("CLAUDE_CONFIG_DIR")
		if cfg == "" {
			cfg = filepath.Join(home, ".claude")
		}
		r.State = []string{cfg}
	case client.Codex:
		env("OPENAI_BASE_URL")
		base, key := codexProvider(o)
		if base != "" {
			r.Endpoints = append(r.Endpoints, base)
		}
		if key != "" {
			r.Env = append(r.Env, key)
		}
		r.State = []string{CodexHome(o)}
	case client.Gemini:
		env("GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL")
		r.State = []string{filepath.Join(home, ".gemini")}
	case client.Qwen:
		env("OPENAI_BASE_URL")
		r.State = []string{filepath.Join(home, ".qwen")}
	case client.OpenCode:
		for _, f := range []string{filepath.Join(configHome(o), "opencode", "opencode.json"), filepath.Join(dir, "opencode.json"),
			filepath.Join(dir, ".opencode", "opencode.json")} {
			r.Endpoints = append(r.Endpoints, openCodeBaseURLs(f)...)
		}
		r.State = []string{filepath.Join(xdg(o, "XDG_DATA_HOME", ".local/share"), "opencode"),
			filepath.Join(xdg(o, "XDG_STATE_HOME", ".local/state"), "opencode"), filepath.Join(configHome(o), "opencode")}
	case client.Cline:
		r.Endpoints = append(r.Endpoints, clineBaseURLs(clineDir(o))...)
		r.State = []string{clineDir(o)}
	case client.Copilot:
		env("COPILOT_PROVIDER_BASE_URL")
		r.State = []string{copilotHome(o)}
	}
	if len(r.Endpoints) == 0 {
		r.Endpoints = append(r.Endpoints, defaultEndpoints(n)...)
	}
	return r
}

func xdg(o Options, name, def string) string {
	if x := o.getenv(name); x != "" {
		return x
	}
	return filepath.Join(o.Home, def)
}

// codexProvider is the base URL and the credential variable of the model
// provider Codex's user configuration selects ("" when it selects none of
// its own).
func codexProvider(o Options) (baseURL, envKey string) {
	data, err := os.ReadFile(filepath.Join(CodexHome(o), "config.toml"))
	if err != nil {
		return "", ""
	}
	var cfg struct {
		Provider  string `toml:"model_provider"`
		Providers map[string]struct {
			BaseURL string `toml:"base_url"`
			EnvKey  string `toml:"env_key"`
		} `toml:"model_providers"`
	}
	if decodeTOML(string(data), &cfg) != nil {
		return "", ""
	}
	p := cfg.Providers[cfg.Provider]
	return p.BaseURL, p.EnvKey
}

// openCodeBaseURLs are the providers' baseURL options in an opencode
// configuration file.
func openCodeBaseURLs(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var cfg struct {
		Provider map[string]struct {
			Options struct {
				BaseURL string `json:"baseURL"`
			} `json:"options"`
		} `json:"provider"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return nil
	}
	var out []string
	for _, p := range cfg.Provider {
		if p.Options.BaseURL != "" {
			out = append(out, p.Options.BaseURL)
		}
	}
	return out
}

// clineBaseURLs are the base URLs Cline's login (cline auth -b URL) keeps
// in its data directory: any "baseUrl"-named value of its state files.
func clineBaseURLs(dir string) []string {
	var out []string
	_ = filepath.WalkDir(filepath.Join(dir, "data"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		if fi, err := d.Info(); err != nil || fi.Size() > 1<<20 {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		var v any
		if json.Unmarshal(data, &v) == nil {
			out = append(out, baseURLs(v)...)
		}
		return nil
	})
	return out
}

func baseURLs(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && strings.Contains(strings.ToLower(k), "baseurl") && strings.Contains(s, "://") {
				out = append(out, s)
			} else {
				out = append(out, baseURLs(val)...)
			}
		}
	case []any:
		for _, e := range x {
			out = append(out, baseURLs(e)...)
		}
	}
	return out
}

// ReadyHeld makes what lets each client start with its project directory
// in dir held read-only under laserbrain run: opencode writes a .gitignore
// into every config directory of its that has none (and stops when it
// cannot), so the project's .opencode gets the one opencode would write —
// it names itself, so git does not see it —, the directory too when it is
// missing. made lists what it made, deepest last, for the caller to take
// away afterwards.
func ReadyHeld(dir string) (made []string) {
	oc := filepath.Join(dir, ".opencode")
	ignore := filepath.Join(oc, ".gitignore")
	if _, err := os.Lstat(ignore); err == nil {
		return nil
	}
	if _, err := os.Lstat(oc); os.IsNotExist(err) {
		if os.Mkdir(oc, 0o755) != nil {
			return nil
		}
		made = append(made, oc)
	}
	if os.WriteFile(ignore, []byte(strings.Join(openCodeIgnored, "\n")+"\n"), 0o644) == nil {
		made = append(made, ignore)
	}
	return made
}
