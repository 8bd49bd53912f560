package confine

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// NetRule lets the tree reach endpoints: a host (an exact name or
// address, or *.domain for any name below domain) and a port.
type NetRule struct {
	// ID names the rule on the record ("model endpoint (claude)",
	// "registry", "policy:ID").
	ID   string `json:"id"`
	Host string `json:"host"`
	Port uint16 `json:"port"`
	// Reads: over plain HTTP only GET, HEAD and OPTIONS go through (what
	// a tunnel carries cannot be read: a publish through one needs a
	// credential the tree does not have).
	Reads bool `json:"reads,omitempty"`
}

// NetPolicy is what the tree may reach.
type NetPolicy struct {
	Allow []NetRule `json:"allow"`
	// Never are endpoints no rule opens: the laserbrain store's.
	Never []NetRule `json:"never,omitempty"`
}

// NetAnswer is the policy's answer for one attempt.
type NetAnswer string

const (
	NetAllowed NetAnswer = "allowed"
	NetRefused NetAnswer = "refused"
	// NetAsked: refused for now, a person asked (attended runs).
	NetAsked NetAnswer = "asked"
)

// RuleNone is the rule a refusal names when no rule allows the endpoint.
const RuleNone = "no rule allows it"

// Decide is the policy's one decision for a connection to host:port
// (method is the request's over plain HTTP, "" for a tunnel or a direct
// connection): allowed or refused, and by which rule.
func (p NetPolicy) Decide(host string, port uint16, method string) (NetAnswer, string) {
	host = canonHost(host)
	for _, r := range p.Never {
		if r.matches(host, port) {
			return NetRefused, r.ID
		}
	}
	for _, r := range p.Allow {
		if !r.matches(host, port) {
			continue
		}
		if r.Reads && method != "" && method != "GET" && method != "HEAD" && method != "OPTIONS" {
			return NetRefused, r.ID + " (reads only: " + method + ")"
		}
		return NetAllowed, r.ID
	}
	return NetRefused, RuleNone
}

func (r NetRule) matches(host string, port uint16) bool {
	if r.Port != port {
		return false
	}
	want := canonHost(r.Host)
	if d, ok := strings.CutPrefix(want, "*."); ok {
		return strings.HasSuffix(host, "."+d)
	}
	return host == want
}

// canonHost is a host as rules compare it: lower case, without brackets
// or a final dot; localhost is the loopback address.
func canonHost(h string) string {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if h == "localhost" {
		return "127.0.0.1"
	}
	if ip := net.ParseIP(h); ip != nil {
		if ip.IsLoopback() && ip.To4() == nil {
			return "::1"
		}
		return ip.String()
	}
	return h
}

// ParseEndpoint reads host:port (a URL's scheme gives the port when it
// has none: http 80, https 443).
func ParseEndpoint(s string) (host string, port uint16, err error) {
	s = strings.TrimSpace(s)
	def := ""
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		switch strings.ToLower(scheme) {
		case "http", "ws":
			def = "80"
		case "https", "wss":
			def = "443"
		default:
			return "", 0, fmt.Errorf("%q: not an http or https address", s)
		}
		s = rest
		if i := strings.IndexAny(s, "/?#"); i >= 0 {
			s = s[:i]
		}
		if i := strings.LastIndexByte(s, '@'); i >= 0 {
			s = s[i+1:]
		}
	}
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		if def == "" {
			return "", 0, fmt.Errorf("%q: want host:port", s)
		}
		h, p = strings.Trim(s, "[]"), def
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 || h == "" {
		return "", 0, fmt.Errorf("%q: want host:port with a port from 1 to 65535", s)
	}
	return canonHost(h), uint16(n), nil
}

// Endpoint is host:port as the record spells it.
func Endpoint(host string, port uint16) string {
	return net.JoinHostPort(canonHost(host), strconv.Itoa(int(port)))
}

// Registries are the public package registries the tree may read by
// default.
var Registries = []string{
	"registry.npmjs.org:443", "registry.yarnpkg.com:443",
	"proxy.golang.org:443", "sum.golang.org:443",
	"pypi.org:443", "files.pythonhosted.org:443",
	"index.crates.io:443", "static.crates.io:443", "crates.io:443",
	"rubygems.org:443", "index.rubygems.org:443",
	"repo.maven.apache.org:443", "repo1.maven.org:443",
	"deb.debian.org:80", "deb.debian.org:443", "security.debian.org:80",
}

// NetOptions say where a tree's network goes.
type NetOptions struct {
	// Model are the client's model endpoints (URLs or host:port).
	Model []string
	// Connect are the project policy's endpoints.
	Connect []NetRule
	// Registries opens the public package registries for reads.
	Registries bool
	// Never are endpoints no rule opens (host:port): the store's.
	Never []string
}

// DefaultProxyPort is the proxy's port inside the tree, unless an endpoint
// reached on the loopback takes it.
const DefaultProxyPort = 3128

// PlanNet is the tree's network for o: what to listen on inside, the
// policy, the proxy's address and the listeners that reach one endpoint
// each (every endpoint the policy allows on the loopback, where a client
// connects directly: http://127.0.0.1:PORT is then reachable inside, and
// only that port).
func PlanNet(o NetOptions) (n Net, p NetPolicy, proxy string, direct map[string]string) {
	direct = map[string]string{}
	taken := map[uint16]bool{}
	allow := func(r NetRule) {
		p.Allow = append(p.Allow, r)
		if ip := net.ParseIP(canonHost(r.Host)); ip != nil && ip.IsLoopback() {
			taken[r.Port] = true
			for _, in := range []string{"127.0.0.1", "::1"} {
				addr := net.JoinHostPort(in, strconv.Itoa(int(r.Port)))
				if _, dup := direct[addr]; !dup {
					n.Listen = append(n.Listen, addr)
					direct[addr] = Endpoint(r.Host, r.Port)
				}
			}
		}
	}
	for _, e := range o.Never {
		if h, port, err := ParseEndpoint(e); err == nil {
			p.Never = append(p.Never, NetRule{ID: "the laserbrain store", Host: h, Port: port})
		}
	}
	for _, m := range o.Model {
		if h, port, err := ParseEndpoint(m); err == nil {
			allow(NetRule{ID: "the client's model endpoint", Host: h, Port: port})
		}
	}
	for _, r := range o.Connect {
		allow(r)
	}
	if o.Registries {
		for _, e := range Registries {
			h, port, _ := ParseEndpoint(e)
			p.Allow = append(p.Allow, NetRule{ID: "a public package registry", Host: h, Port: port, Reads: true})
		}
	}
	pp := uint16(DefaultProxyPort)
	for taken[pp] {
		pp++
	}
	proxy = net.JoinHostPort("127.0.0.1", strconv.Itoa(int(pp)))
	n.Listen = append([]string{proxy}, n.Listen...)
	return n, p, proxy, direct
}
