package shell

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
	"mvdan.cc/sh/v3/syntax"
)

// What leaves the machine. A command that sends data to another host — an
// upload (curl -d/-F/-T, wget --post-*, scp, rsync or sftp to a remote,
// nc, socat, a /dev/tcp redirection) or a lookup of a name only the
// running shell spells (what DNS-shaped exfiltration looks like) — is
// outward and irreversible: what left cannot be called back. So is a
// credential (a key file, a secret's variable, a token's shape) read into
// any network command. Loopback stays on the machine; which other hosts
// a project sends to is its policy's to say (Finding.Host).

// sends records that by sends data to host ("" when only the running
// shell knows it); cred names the credential it carries, if any.
func (a *analyzer) sends(by, host, cred, text string) {
	if host != "" && loopback(host) {
		return
	}
	to := host
	if to == "" {
		to = "a host known only at run time"
	}
	label := "parsed: " + by + " uploads to " + to + " (sends data off this machine)"
	where, note := Executed, ""
	if cred != "" {
		label = "parsed: " + by + " sends a credential (" + cred + ") to " + to
	}
	if strings.HasPrefix(cred, "$") && host != "" {
		// A secret's variable sent to a named host is how an API is
		// called with its token — or how the token leaves: a person
		// tells which (or the policy's hosts do).
		where, note = Unknown, "a token sent to the service it is for is ordinary; the gate cannot tell whether "+host+" is that service"
	}
	a.add(Finding{Label: label, Outward: true, Where: where, Note: note, Command: text, Host: host})
}

// loopback: the host is this machine.
func loopback(host string) bool {
	h := strings.ToLower(strings.Trim(host, "[]"))
	return h == "localhost" || h == "::1" || h == "0.0.0.0" || strings.HasPrefix(h, "127.") || strings.HasSuffix(h, ".localhost")
}

// hostOf is the host a URL or a remote (user@host:path, host::module)
// names; ok is false when it is known only at run time.
func hostOf(w arg, scheme string) (string, bool) {
	s := w.val
	if !w.known {
		// The part before the first expansion may name the host
		// (https://host/?k=$SECRET).
		i := strings.IndexAny(s, "$`")
		if i < 0 || !strings.Contains(s[:i], "://") || !strings.Contains(s[strings.Index(s, "://")+3:i], "/") {
			return "", false
		}
		s = s[:i]
	}
	if !strings.Contains(s, "://") {
		s = scheme + "://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	return u.Hostname(), true
}

// remote is the host of an scp or rsync operand naming another machine
// ([user@]host:path, host::module, scp:// or rsync://), "" for a local
// path; known is false when only the running shell knows the word.
func remote(w arg) (host string, isRemote, known bool) {
	v := w.val
	if i := strings.Index(v, "://"); i > 0 {
		h, ok := hostOf(w, "")
		return h, true, ok
	}
	colon := strings.IndexByte(v, ':')
	if colon <= 0 || strings.ContainsRune(v[:colon], '/') {
		return "", false, true
	}
	h := v[:colon]
	if at := strings.LastIndexByte(h, '@'); at >= 0 {
		h = h[at+1:]
	}
	return strings.Trim(h, "[]"), true, w.known
}

// credential says which credential text reads, if it reads one: a key or
// credentials file, a variable named like a secret, the whole environment,
// or a token in the shape of one (secretShapes; named by its kind, never
// its value).
func credential(text string) string {
	for _, re := range credentialRes.Get() {
		if m := re.FindString(text); m != "" {
			return strings.TrimLeft(m, " \t'\"=@<")
		}
	}
	for _, s := range tokenShapes.Get() {
		if s.re.MatchString(text) {
			return "a token of kind " + s.kind
		}
	}
	return ""
}

// credentialRes are the shapes of credentials' files and variables (the
// tokens services issue are secretShapes, but for two more below).
var credentialRes = firstuse.Value[[]*regexp.Regexp]{New: func() []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, src := range []string{
		`[~/]\.ssh/[\w.-]*|\bid_(rsa|dsa|ecdsa|ed25519)\b|[~/]\.aws/(credentials|config)|[~/]\.config/gcloud\b\S*|[~/]\.azure/\S*|[~/]\.kube/config|[~/]\.docker/config\.json|[~/]\.(npmrc|pypirc|netrc|git-credentials|pgpass)\b|[~/]\.gnupg/\S*|/etc/shadow\b|(^|[\s/'"=@<])\.env(\.[\w-]+)?\b|\b[\w-]*credentials\.json\b`,
		`\$\{?[A-Za-z_]*(?i:secret|token|passw(or)?d|api_?key|access_?key|private_?key|credential)[A-Za-z0-9_]*`,
		`\$\(\s*(env|printenv|set|export\s+-p)\s*\)`,
		// Tokens beyond secretShapes' kinds: a GitHub refresh token, any
		// private key block.
		`\bghr_[A-Za-z0-9]{20,}|-----BEGIN [A-Z ]*PRIVATE KEY-----`,
	} {
		out = append(out, regexp.MustCompile(src))
	}
	return out
}}

// inputCredential is the credential a command reads on its standard input
// (a file, or what the stage before it in a pipe read), if any.
func inputCredential(in input) string {
	switch in.kind {
	case fileInput:
		return credential(in.text)
	case unknownInput:
		return credential(in.src)
	}
	return ""
}

// inputSecret is the secret held by the file a command reads on its
// standard input, if any.
func (a *analyzer) inputSecret(in input) string {
	if in.kind != fileInput {
		return ""
	}
	return a.sentSecret(arg{val: in.text, known: !strings.ContainsAny(in.text, "$`")})
}

// opt is one option a command line gave, with its value.
type opt struct {
	name string // "-d", "--data"
	val  arg
}

// readOpts reads a command line the way getopt does, forgivingly: short
// options cluster and a value-taking one takes the rest of its word or
// the next word (curl -fsSLo FILE); a long option takes the next word
// when longValue says so, or its =value; an option it does not know is a
// flag. The rest are operands.
func readOpts(args []arg, shortValue string, longValue func(string) bool) (opts []opt, ops []arg) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.val
		switch {
		case v == "-" || !strings.HasPrefix(v, "-"):
			ops = append(ops, w)
		case v == "--":
			return opts, append(ops, args[i+1:]...)
		case strings.HasPrefix(v, "--"):
			name, val, glued := strings.Cut(v, "=")
			o := opt{name: name, val: arg{val: val, known: w.known}}
			if !glued && longValue(name) {
				o.val = optionValue(args, &i)
			}
			opts = append(opts, o)
		default:
			for j := 1; j < len(v); j++ {
				o := opt{name: "-" + v[j:j+1]}
				if strings.IndexByte(shortValue, v[j]) >= 0 {
					o.val = arg{val: v[j+1:], known: w.known}
					if j == len(v)-1 {
						o.val = optionValue(args, &i)
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
		}
	}
	return opts, ops
}

// curl's options that take a value (curl 8): the short letters, and the
// long names read here.
const curlShortValue = "AbcCdDeEFHKmoPQrtTuUwxXyYz"

func curlLongValue(name string) bool {
	switch strings.TrimPrefix(name, "--") {
	case "data", "data-ascii", "data-binary", "data-raw", "data-urlencode", "form", "form-string", "json", "upload-file",
		"header", "proxy-header", "user", "user-agent", "request", "referer", "cookie", "cookie-jar", "config", "max-time",
		"connect-timeout", "retry", "retry-delay", "retry-max-time", "proxy", "proxy-user", "cacert", "capath", "cert",
		"key", "cert-type", "key-type", "pass", "resolve", "connect-to", "output", "output-dir", "dump-header", "trace",
		"trace-ascii", "stderr", "etag-save", "etag-compare", "hsts", "alt-svc", "url", "write-out", "range", "limit-rate",
		"max-filesize", "interface", "dns-servers", "oauth2-bearer", "aws-sigv4", "variable", "url-query", "unix-socket",
		"time-cond", "continue-at", "speed-limit", "speed-time", "max-redirs", "local-port", "noproxy", "preproxy",
		"socks5", "socks5-hostname", "socks4", "socks4a", "quote", "mail-from", "mail-rcpt", "ftp-port", "netrc-file",
		"request-target", "proto", "proto-redir", "proto-default", "pinnedpubkey", "ciphers", "create-file-mode":
		return true
	}
	return false
}

// curlUpload: the options with which curl sends data (a request body, a
// form, a file).
func curlUpload(name string) bool {
	switch name {
	case "-d", "-F", "-T", "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--form",
		"--form-string", "--json", "--upload-file":
		return true
	}
	return false
}

// curlNetwork reads what curl sends: a body, a form or a file to each URL,
// and a credential in anything it sends (the data and the files it names,
// the headers, the user, the URLs, its standard input with @-).
func (a *analyzer) curlNetwork(c *cmdCall, opts []opt, urls []arg) {
	text := commandText(c.name, c.args)
	upload, cred := false, ""
	for _, o := range opts {
		v := o.val.val
		switch {
		case curlUpload(o.name):
			upload = upload || fromMachine(o, c.io.in)
			if f, ok := dataFile(o.name, v); ok && f == "-" {
				cred = firstOf(firstOf(cred, inputCredential(c.io.in)), a.inputSecret(c.io.in))
			} else if ok && o.val.known {
				cred = firstOf(cred, a.sentSecret(arg{val: f, known: true}))
			}
			cred = firstOf(cred, credential(v))
		case o.name == "-H" || o.name == "--header" || o.name == "-u" || o.name == "--user" || o.name == "--oauth2-bearer":
			cred = firstOf(cred, credential(v))
		case o.name == "--url":
			urls = append(urls, o.val)
		}
	}
	for _, u := range urls {
		cred = firstOf(cred, credential(u.val))
		upload = upload || builtHere(u)
	}
	if !upload && cred == "" {
		return
	}
	for _, u := range urls {
		host, _ := hostOf(u, "http")
		a.sends(c.name, host, cred, text)
	}
}

// fromMachine: what a data option sends comes from this machine — a file
// it names, its standard input when that is not text written in the
// command, or a value only the running shell knows. Text written in the
// command itself (-d 'a=1', a here-document) carries nothing of the
// machine's.
func fromMachine(o opt, in input) bool {
	f, ok := dataFile(o.name, o.val.val)
	switch {
	case ok && f == "-":
		return in.kind == fileInput || in.kind == unknownInput
	case ok:
		return true
	}
	return !o.val.known
}

// builtHere: a URL carries output of a command run here (a command
// substitution in its path or query): what that output holds leaves with
// the request.
func builtHere(u arg) bool {
	return !u.known && (strings.Contains(u.val, "$(") || strings.Contains(u.val, "`"))
}

// dataFile is the file a data option sends (-d @FILE, -F name=@FILE or
// name=<FILE, -T FILE), if it names one.
func dataFile(name, v string) (string, bool) {
	switch {
	case name == "-T" || name == "--upload-file":
		return v, true
	case name == "-F" || name == "--form":
		_, val, _ := strings.Cut(v, "=")
		if f, ok := strings.CutPrefix(val, "@"); ok {
			return strings.SplitN(f, ";", 2)[0], true
		}
		if f, ok := strings.CutPrefix(val, "<"); ok {
			return strings.SplitN(f, ";", 2)[0], true
		}
	case name == "--data-urlencode":
		if _, f, ok := strings.Cut(v, "@"); ok {
			return f, true
		}
	case name != "--data-raw" && name != "--form-string":
		if f, ok := strings.CutPrefix(v, "@"); ok {
			return f, true
		}
	}
	return "", false
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// wgetNetwork: wget sends a body with --post-data/--post-file and
// --body-data/--body-file; a credential in its URLs or headers is sent
// too.
func (a *analyzer) wgetNetwork(c *cmdCall, urls []arg) {
	upload, cred := false, ""
	for i, w := range c.args {
		name, val, glued := strings.Cut(w.val, "=")
		valKnown := w.known
		if !glued && i+1 < len(c.args) {
			val, valKnown = c.args[i+1].val, c.args[i+1].known
		}
		switch name {
		case "--post-data", "--post-file", "--body-data", "--body-file":
			upload = true
			cred = firstOf(cred, credential(val))
			if strings.HasSuffix(name, "-file") && valKnown {
				cred = firstOf(cred, a.sentSecret(arg{val: val, known: true}))
			}
		case "--header", "--user", "--password", "--http-password":
			cred = firstOf(cred, credential(val))
		}
		if !w.known {
			cred = firstOf(cred, credential(w.val))
		}
	}
	for _, u := range urls {
		cred = firstOf(cred, credential(u.val))
	}
	if !upload && cred == "" {
		return
	}
	for _, u := range urls {
		if !strings.HasPrefix(u.val, "-") {
			host, _ := hostOf(u, "http")
			a.sends("wget", host, cred, commandText("wget", c.args))
		}
	}
}

// remoteCopy: scp, rsync and sftp copying to another machine send what
// they copy (the sources: a key file among them is a credential sent).
func (a *analyzer) remoteCopy(by string, ops []arg, text string) {
	if len(ops) < 2 {
		return
	}
	host, isRemote, _ := remote(ops[len(ops)-1])
	if !isRemote {
		return
	}
	cred := ""
	for _, s := range ops[:len(ops)-1] {
		cred = firstOf(cred, credential(s.val))
		if _, isRemote, _ := remote(s); !isRemote {
			cred = firstOf(cred, a.sentSecret(s))
		}
	}
	a.sends(by, host, cred, text)
}

// netcatModel: nc, ncat, netcat, telnet and sftp connect to a host and
// send what they read (their input, or sftp's put); listening (-l) or
// scanning (-z) sends nothing of ours. socat's addresses name the hosts
// it connects to.
func (a *analyzer) netcatModel(c *cmdCall) bool {
	text := commandText(c.name, c.args)
	if c.name == "socat" {
		for _, w := range c.args {
			kind, rest, ok := strings.Cut(w.val, ":")
			switch strings.ToUpper(kind) {
			case "TCP", "TCP4", "TCP6", "TCP-CONNECT", "UDP", "UDP4", "UDP6", "UDP-SENDTO", "OPENSSL", "SSL", "SCTP", "DCCP":
				if ok {
					host, _, _ := strings.Cut(rest, ":")
					if !w.known {
						host = ""
					}
					a.sends("socat", host, firstOf(inputCredential(c.io.in), credential(text)), text)
				}
			}
		}
		return true
	}
	opts, ops := readOpts(c.args, "bcCeiIOpqsTVwxXmMPoSu", func(string) bool { return false })
	for _, o := range opts {
		if o.name == "-l" || o.name == "-z" || o.name == "--listen" {
			return true
		}
		if o.name == "-e" || o.name == "-c" {
			a.subshell(func() { a.walk.script(o.val.val, c.d+1) })
		}
	}
	if len(ops) == 0 {
		return true
	}
	host, _ := hostOf(ops[0], "tcp")
	a.sends(c.name, host, firstOf(firstOf(inputCredential(c.io.in), credential(text)), a.inputSecret(c.io.in)), text)
	return true
}

// lookupModel: a name looked up (dig, nslookup, host, ping, …) that only
// the running shell spells carries data to whoever answers for its
// domain — DNS-shaped exfiltration. A literal name is a lookup.
func (a *analyzer) lookupModel(c *cmdCall) bool {
	_, ops := readOpts(c.args, "bcfipqtwWxyIlsQ", func(string) bool { return false })
	for _, w := range ops {
		if strings.HasPrefix(w.val, "@") || strings.HasPrefix(w.val, "+") {
			continue
		}
		if !w.known || credential(w.val) != "" {
			a.add(Finding{Label: "parsed: " + c.name + " looks up a name built at run time (DNS-shaped exfiltration: the name carries data off this machine)",
				Outward: true, Where: Executed, Command: commandText(c.name, c.args)})
			return true
		}
	}
	return true
}

// devNet: a redirection onto /dev/tcp/HOST/PORT or /dev/udp/HOST/PORT
// (bash opens a connection) sends what the command writes to HOST.
func (a *analyzer) devNet(w arg, s *syntax.Stmt) {
	rest, ok := strings.CutPrefix(w.val, "/dev/tcp/")
	if !ok {
		rest, ok = strings.CutPrefix(w.val, "/dev/udp/")
	}
	if !ok {
		return
	}
	host, _, _ := strings.Cut(rest, "/")
	text := a.nodeText(s)
	if !w.known && strings.ContainsAny(host, "$`") {
		host = ""
	}
	a.sends("a /dev/tcp redirection", host, credential(text), firstLine(text))
}
