package confine

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/internal/envconfig"
)

// Credentials are kept out of the agent's tree two ways: the places people
// keep them are covered, inside the tree, by an empty file or directory
// (Spec.Mask), and the variables that hold them are taken out of its
// environment (ScrubEnv). What a client needs to reach its model is kept,
// by name; a person passes anything else through on purpose.

// CredentialPaths are the places credentials are kept for the user whose
// home is home, as getenv points to them: ssh keys and the agent's socket,
// the cloud CLIs', kube config, registry tokens, the git credential store,
// gh's token, .netrc, the databases' password files, gpg keys and the
// local sockets that act with the user's authority (docker's). Each is
// listed whether or not it exists; the caller masks those that do.
func CredentialPaths(home string, getenv func(string) string) []Protected {
	var out []Protected
	add := func(p, what string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) {
			if home == "" {
				return
			}
			p = filepath.Join(home, p)
		}
		out = append(out, Protected{filepath.Clean(p), what})
	}
	env := func(name, what string) {
		for _, p := range filepath.SplitList(getenv(name)) {
			if filepath.IsAbs(p) {
				add(p, what+" ($"+name+")")
			}
		}
	}
	for _, c := range homeCredentials {
		add(c.Path, c.What)
	}
	env("SSH_AUTH_SOCK", "the ssh agent's socket")
	env("GNUPGHOME", "gpg keys")
	env("AWS_SHARED_CREDENTIALS_FILE", "AWS credentials")
	env("AWS_CONFIG_FILE", "AWS CLI configuration")
	env("CLOUDSDK_CONFIG", "Google Cloud CLI credentials")
	env("GOOGLE_APPLICATION_CREDENTIALS", "Google Cloud credentials")
	env("AZURE_CONFIG_DIR", "Azure CLI credentials")
	env("KUBECONFIG", "kube config")
	if d := getenv("DOCKER_CONFIG"); filepath.IsAbs(d) {
		add(filepath.Join(d, "config.json"), "docker registry credentials ($DOCKER_CONFIG)")
	}
	env("NPM_CONFIG_USERCONFIG", "npm registry tokens")
	if d := getenv("CARGO_HOME"); filepath.IsAbs(d) {
		add(filepath.Join(d, "credentials.toml"), "cargo registry tokens ($CARGO_HOME)")
		add(filepath.Join(d, "credentials"), "cargo registry tokens ($CARGO_HOME)")
	}
	env("GH_CONFIG_DIR", "gh's token")
	env("NETRC", ".netrc")
	env("PGPASSFILE", "PostgreSQL passwords")
	env("VAULT_CONFIG_PATH", "Vault token")
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		add(filepath.Join(x, "gh"), "gh's token ($XDG_CONFIG_HOME)")
		add(filepath.Join(x, "gcloud"), "Google Cloud CLI credentials ($XDG_CONFIG_HOME)")
		add(filepath.Join(x, "git", "credentials"), "the git credential store ($XDG_CONFIG_HOME)")
	}
	uid := os.Getuid()
	for _, s := range []Protected{
		{fmt.Sprintf("/run/user/%d/gnupg", uid), "gpg agent's sockets"},
		{fmt.Sprintf("/run/user/%d/keyring", uid), "the keyring's sockets"},
		{fmt.Sprintf("/run/user/%d/docker.sock", uid), "docker's socket (rootless)"},
		{fmt.Sprintf("/run/user/%d/podman", uid), "podman's socket (rootless)"},
		{"/var/run/docker.sock", "docker's socket"},
		{"/run/docker.sock", "docker's socket"},
		{"/run/podman/podman.sock", "podman's socket"},
		{"/run/containerd/containerd.sock", "containerd's socket"},
	} {
		add(s.Path, s.What)
	}
	return out
}

// ServerDirs are the envconfig.ServerDirs a confined agent could reach: under its
// $TMPDIR and under /tmp, each made (private to the user) when missing,
// so that a server started later is covered too. One that cannot be made
// is left out: no server can listen there either.
func ServerDirs(getenv func(string) string) []Protected {
	var out []Protected
	for _, tmp := range []string{getenv("TMPDIR"), "/tmp"} {
		if !filepath.IsAbs(tmp) {
			continue
		}
		d := envconfig.ServerDir(filepath.Clean(tmp))
		if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
			continue
		}
		if !slices.ContainsFunc(out, func(p Protected) bool { return p.Path == d }) {
			out = append(out, Protected{d, "laserbrain's hook servers (they answer with the store's credentials)"})
		}
	}
	return out
}

// homeCredentials are the places in a home directory where credentials
// are kept by default.
var homeCredentials = []Protected{
	{".ssh", "ssh keys"},
	{".gnupg", "gpg keys"},
	{".aws", "AWS CLI credentials and configuration"},
	{".azure", "Azure CLI credentials"},
	{".config/gcloud", "Google Cloud CLI credentials"},
	{".kube", "kube config"},
	{".docker/config.json", "docker registry credentials"},
	{".npmrc", "npm registry tokens"},
	{".yarnrc.yml", "yarn registry tokens"},
	{".pypirc", "PyPI tokens"},
	{".config/pip/pip.conf", "pip index credentials"},
	{".cargo/credentials.toml", "cargo registry tokens"},
	{".cargo/credentials", "cargo registry tokens"},
	{".gem/credentials", "RubyGems tokens"},
	{".git-credentials", "the git credential store"},
	{".config/git/credentials", "the git credential store"},
	{".config/gh", "gh's token"},
	{".config/hub", "hub's token"},
	{".netrc", ".netrc"},
	{".pgpass", "PostgreSQL passwords"},
	{".my.cnf", "MySQL passwords"},
	{".vault-token", "Vault token"},
	{".terraform.d/credentials.tfrc.json", "Terraform Cloud tokens"},
	{".password-store", "pass's password store"},
	{".local/share/keyrings", "the desktop keyring"},
}

// credentialVars are variables that hold or point to credentials whose
// names ScrubEnv's rule of words would miss.
var credentialVars = []string{
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
	"KUBECONFIG", "DOCKER_AUTH_CONFIG", "GOOGLE_APPLICATION_CREDENTIALS", "AWS_SHARED_CREDENTIALS_FILE",
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "CLOUDSDK_CONFIG", "AZURE_CONFIG_DIR",
	"PGPASSFILE", "PGSERVICEFILE", "PGSERVICE", "DATABASE_URL", "GH_CONFIG_DIR", "NETRC",
	"VAULT_CONFIG_PATH", "NPM_CONFIG_USERCONFIG", "DOCKER_CONFIG",
}

// CredentialVar says whether the variable name=value holds a credential
// or points to one: one of credentialVars; a name with a word TOKEN,
// KEY, PAT, AUTH or COOKIE, or with SECRET, PASSWORD, PASSWD,
// PASSPHRASE or CREDENTIAL in a word (ANTHROPIC_API_KEY, NODE_AUTH_TOKEN,
// PGPASSWORD, AWS_SECRET_ACCESS_KEY); or a URL value that carries a
// password (postgres://u:p@host).
func CredentialVar(name, value string) bool {
	if slices.Contains(credentialVars, name) {
		return true
	}
	for _, w := range strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch w {
		case "TOKEN", "TOKENS", "KEY", "KEYS", "APIKEY", "PAT", "AUTH", "COOKIE", "COOKIES", "DSN":
			return true
		}
		for _, s := range []string{"SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL"} {
			if strings.Contains(w, s) {
				return true
			}
		}
	}
	if strings.Contains(value, "://") && strings.Contains(value, "@") {
		if u, err := url.Parse(strings.TrimSpace(value)); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				return true
			}
		}
	}
	return false
}

// ScrubEnv is env without the credential variables (CredentialVar), but
// for those keep names, and the names it took out, sorted.
func ScrubEnv(env []string, keep []string) (out, removed []string) {
	out = make([]string, 0, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if CredentialVar(k, v) && !slices.Contains(keep, k) && !strings.HasPrefix(k, "LASERBRAIN_") {
			if !slices.Contains(removed, k) {
				removed = append(removed, k)
			}
			continue
		}
		out = append(out, kv)
	}
	slices.Sort(removed)
	return out, removed
}
