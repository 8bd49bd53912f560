package confine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Attempt is one connection the tree tried, as the run records it.
type Attempt struct {
	At       time.Time `json:"at"`
	Endpoint string    `json:"endpoint"`
	// Via is how it came: "connect" (a tunnel through the proxy), "http"
	// (a plain request through the proxy) or "direct" (a listener for one
	// endpoint).
	Via    string    `json:"via"`
	Method string    `json:"method,omitempty"`
	Answer NetAnswer `json:"answer"`
	Rule   string    `json:"rule"`
	// Sent and Received are the bytes the tree sent and received.
	Sent     int64  `json:"sent"`
	Received int64  `json:"received"`
	Error    string `json:"error,omitempty"`
}

// Mediator is the supervisor's side of the tree's network: it serves the
// listeners the setup step handed over, outside the boundary, and relays
// what the policy allows to the real endpoint.
type Mediator struct {
	Policy NetPolicy
	// Proxy is the HTTP proxy's address inside the tree; Direct maps each
	// other listener's address inside to the endpoint it reaches.
	Proxy  string
	Direct map[string]string
	// Permit is asked about an endpoint the policy refuses (but never one
	// of its Never rules): a person's authorization lets it through, and
	// rule names it. nil: nothing but the policy.
	Permit func(endpoint string) (rule string, ok bool)
	// Attended: a refusal is a question to a person (NetAsked).
	Attended bool
	// HowToAllow is what a refusal tells the agent a person does to allow
	// the endpoint.
	HowToAllow func(endpoint string) string
	// Record takes each attempt once it is over (nil: dropped).
	Record func(Attempt)
	// DialTimeout bounds a connection to an endpoint (0: 30s).
	DialTimeout time.Duration

	mu     sync.Mutex
	lns    []net.Listener
	conns  map[net.Conn]bool
	srv    *http.Server
	wg     sync.WaitGroup
	closed bool
}

// Serve serves the listeners (by their address inside) until Close.
func (m *Mediator) Serve(lns map[string]net.Listener) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conns == nil {
		m.conns = map[net.Conn]bool{}
	}
	for addr, ln := range lns {
		m.lns = append(m.lns, ln)
		if addr == m.Proxy {
			m.srv = &http.Server{Handler: http.HandlerFunc(m.proxy), ReadHeaderTimeout: 30 * time.Second,
				ConnState: func(c net.Conn, s http.ConnState) { m.track(c, s != http.StateClosed && s != http.StateHijacked) }}
			srv := m.srv
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				_ = srv.Serve(ln)
			}()
			continue
		}
		target := m.Direct[addr]
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			m.acceptDirect(ln, target)
		}()
	}
}

// Close stops serving and ends every connection in flight.
func (m *Mediator) Close() {
	m.mu.Lock()
	m.closed = true
	for _, ln := range m.lns {
		ln.Close()
	}
	srv := m.srv
	for c := range m.conns {
		c.Close()
	}
	m.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
	m.wg.Wait()
}

func (m *Mediator) track(c net.Conn, open bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if open && !m.closed {
		m.conns[c] = true
	} else {
		delete(m.conns, c)
	}
}

func (m *Mediator) record(a Attempt) {
	if m.Record != nil {
		m.Record(a)
	}
}

// decide is the policy's answer for host:port, then a person's
// authorization's, then the ask when someone attends.
func (m *Mediator) decide(host string, port uint16, method string) (NetAnswer, string) {
	ans, rule := m.Policy.Decide(host, port, method)
	if ans == NetAllowed {
		return ans, rule
	}
	never := false
	for _, r := range m.Policy.Never {
		never = never || r.ID == rule
	}
	if !never && m.Permit != nil {
		if r, ok := m.Permit(Endpoint(host, port)); ok {
			return NetAllowed, r
		}
	}
	if m.Attended && !never {
		return NetAsked, rule
	}
	return NetRefused, rule
}

// refusal is what the agent is told.
func (m *Mediator) refusal(endpoint string, ans NetAnswer, rule string) string {
	msg := fmt.Sprintf("laserbrain: the connection to %s is refused (%s): this agent's network goes only where the project policy (.laserbrain/policy.json \"boundary\") allows", endpoint, rule)
	if m.HowToAllow != nil {
		how := m.HowToAllow(endpoint)
		if ans == NetAsked {
			msg += "; a person allows it with: " + how
		} else {
			msg += "; nobody attends this run to allow it (a person could, ahead of the next run: " + how + ")"
		}
	}
	return msg
}

func (m *Mediator) dial(ctx context.Context, endpoint string) (net.Conn, error) {
	t := m.DialTimeout
	if t <= 0 {
		t = 30 * time.Second
	}
	d := net.Dialer{Timeout: t}
	return d.DialContext(ctx, "tcp", endpoint)
}

func (m *Mediator) acceptDirect(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		m.track(c, true)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			defer m.track(c, false)
			m.direct(c, target)
		}()
	}
}

func (m *Mediator) direct(c net.Conn, target string) {
	defer c.Close()
	a := Attempt{At: time.Now().UTC(), Endpoint: target, Via: "direct"}
	host, port, err := ParseEndpoint(target)
	if err != nil {
		a.Answer, a.Rule, a.Error = NetRefused, RuleNone, err.Error()
		m.record(a)
		return
	}
	a.Endpoint = Endpoint(host, port)
	a.Answer, a.Rule = m.decide(host, port, "")
	if a.Answer != NetAllowed {
		m.record(a)
		return
	}
	up, err := m.dial(context.Background(), target)
	if err != nil {
		a.Error = err.Error()
		m.record(a)
		return
	}
	m.track(up, true)
	defer m.track(up, false)
	a.Sent, a.Received = splice(c, up)
	m.record(a)
}

// splice copies both ways until both are done, half-closing each side
// as the other ends, and counts the bytes.
func splice(inside, outside net.Conn) (sent, received int64) {
	var wg sync.WaitGroup
	var s, r atomic.Int64
	one := func(dst, src net.Conn, n *atomic.Int64) {
		defer wg.Done()
		k, _ := io.Copy(dst, src)
		n.Add(k)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	wg.Add(2)
	go one(outside, inside, &s)
	go one(inside, outside, &r)
	wg.Wait()
	inside.Close()
	outside.Close()
	return s.Load(), r.Load()
}

// proxy is the HTTP proxy inside the tree: CONNECT tunnels and plain
// requests, each decided by the policy.
func (m *Mediator) proxy(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		m.tunnel(w, r)
		return
	}
	if r.URL.Host == "" || (r.URL.Scheme != "http" && r.URL.Scheme != "") {
		http.Error(w, "laserbrain: this is the agent's network proxy: send it CONNECT or an absolute http:// request", http.StatusBadRequest)
		return
	}
	m.forward(w, r)
}

func hostPort(h, def string) (string, uint16, error) {
	if _, _, err := net.SplitHostPort(h); err != nil {
		h = net.JoinHostPort(strings.Trim(h, "[]"), def)
	}
	return ParseEndpoint(h)
}

// admit decides attempt a at where (host[:port], defPort when it names
// none) for method, and answers w itself when it is refused (a recorded):
// false then.
func (m *Mediator) admit(w http.ResponseWriter, a *Attempt, where, defPort, method string) bool {
	host, port, err := hostPort(where, defPort)
	if err != nil {
		a.Answer, a.Rule, a.Error = NetRefused, RuleNone, err.Error()
		m.record(*a)
		http.Error(w, "laserbrain: "+err.Error(), http.StatusBadRequest)
		return false
	}
	a.Endpoint = Endpoint(host, port)
	a.Answer, a.Rule = m.decide(host, port, method)
	if a.Answer != NetAllowed {
		m.record(*a)
		http.Error(w, m.refusal(a.Endpoint, a.Answer, a.Rule), http.StatusForbidden)
		return false
	}
	return true
}

func (m *Mediator) tunnel(w http.ResponseWriter, r *http.Request) {
	a := Attempt{At: time.Now().UTC(), Via: "connect", Endpoint: r.Host}
	if !m.admit(w, &a, r.Host, "443", "") {
		return
	}
	up, err := m.dial(r.Context(), a.Endpoint)
	if err != nil {
		a.Error = err.Error()
		m.record(a)
		http.Error(w, "laserbrain: "+a.Endpoint+": "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "laserbrain: the proxy cannot tunnel", http.StatusInternalServerError)
		return
	}
	c, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	m.track(c, true)
	m.track(up, true)
	defer m.track(c, false)
	defer m.track(up, false)
	if _, err := c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		c.Close()
		up.Close()
		return
	}
	// What the client sent after its request, already read.
	if n := buf.Reader.Buffered(); n > 0 {
		early, _ := buf.Reader.Peek(n)
		k, _ := up.Write(early)
		a.Sent += int64(k)
	}
	s, rcv := splice(c, up)
	a.Sent += s
	a.Received = rcv
	m.record(a)
}

// hopHeaders are the headers a proxy does not pass on.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

var plainTransport = &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
	MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: 10 * time.Minute}

func (m *Mediator) forward(w http.ResponseWriter, r *http.Request) {
	a := Attempt{At: time.Now().UTC(), Via: "http", Method: r.Method, Endpoint: r.URL.Host}
	if !m.admit(w, &a, r.URL.Host, "80", r.Method) {
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme = "http"
	out.URL.Host = a.Endpoint
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	body := &counter{r: r.Body}
	if r.Body != nil && r.Body != http.NoBody {
		out.Body = body
	}
	resp, err := plainTransport.RoundTrip(out)
	if err != nil {
		a.Error = err.Error()
		a.Sent = body.n
		m.record(a)
		http.Error(w, "laserbrain: "+a.Endpoint+": "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for _, h := range hopHeaders {
		resp.Header.Del(h)
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	a.Received = copyFlushing(w, resp.Body)
	a.Sent = body.n
	m.record(a)
}

// copyFlushing copies a response as it comes (a model's answer streams).
func copyFlushing(w http.ResponseWriter, r io.Reader) int64 {
	f, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n
			}
			n += int64(k)
			if f != nil {
				f.Flush()
			}
		}
		if err != nil {
			return n
		}
	}
}

type counter struct {
	r io.ReadCloser
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	return k, err
}

func (c *counter) Close() error { return c.r.Close() }

// ProxyEnv are the variables that send a tree's clients through the proxy
// at addr: every spelling the common tools read, and no exceptions.
func ProxyEnv(addr string) []string {
	u := "http://" + addr
	var out []string
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
		"npm_config_proxy", "npm_config_https_proxy"} {
		out = append(out, k+"="+u)
	}
	return append(out, "NO_PROXY=", "no_proxy=")
}

// ProxyVars are the names ProxyEnv sets.
var ProxyVars = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
	"npm_config_proxy", "npm_config_https_proxy", "NO_PROXY", "no_proxy"}

// NetSummary is a tree's network as its attempts add up: in all and per
// endpoint, in the order first tried.
type NetSummary struct {
	NetCount
	Endpoints []NetEndpoint `json:"endpoints"`
}

// NetCount counts attempts by answer, and the bytes of those allowed.
type NetCount struct {
	Allowed  int   `json:"allowed"`
	Refused  int   `json:"refused"`
	Asked    int   `json:"asked"`
	Sent     int64 `json:"sent"`
	Received int64 `json:"received"`
}

// NetEndpoint is one endpoint's attempts, and the rule that last decided.
type NetEndpoint struct {
	Endpoint string `json:"endpoint"`
	NetCount
	Rule string `json:"rule"`
}

func (c *NetCount) add(a Attempt) {
	switch a.Answer {
	case NetAllowed:
		c.Allowed++
	case NetAsked:
		c.Asked++
	default:
		c.Refused++
	}
	c.Sent += a.Sent
	c.Received += a.Received
}

// SummarizeNet adds attempts up (nil when there are none).
func SummarizeNet(as []Attempt) *NetSummary {
	if len(as) == 0 {
		return nil
	}
	s := &NetSummary{}
	at := map[string]int{}
	for _, a := range as {
		s.add(a)
		i, ok := at[a.Endpoint]
		if !ok {
			i = len(s.Endpoints)
			at[a.Endpoint] = i
			s.Endpoints = append(s.Endpoints, NetEndpoint{Endpoint: a.Endpoint})
		}
		s.Endpoints[i].add(a)
		s.Endpoints[i].Rule = a.Rule
	}
	return s
}
