package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// LoopbackAddr checks an --addr: a host on the loopback interface
// (127.0.0.0/8, ::1, or localhost, which is bound as 127.0.0.1) and a
// port (0: any free one). Any other address is refused: the view and its
// acts are for the person at this machine.
func LoopbackAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--addr %q: want HOST:PORT on the loopback interface, like 127.0.0.1:8080", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("--addr %q: the port must be a number from 0 to 65535", addr)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return "", fmt.Errorf("--addr %q: %q is not a loopback address (127.0.0.1, ::1 or localhost); the view serves this machine only", addr, host)
	}
	return net.JoinHostPort(ip.String(), port), nil
}

// secret is 32 random bytes, URL-safe.
func secret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// guard holds the server's secrets, in memory only: the one-time launch
// token the printed link carries, the session it is exchanged for, and
// the page's anti-forgery token derived from the session.
type guard struct {
	mu     sync.Mutex
	launch string // "" once spent
	sess   string
	csrf   string
	cookie string
	// hosts are the Host values the server answers to, origins the
	// Origin values an act may come from.
	hosts   map[string]bool
	origins map[string]bool
}

func newGuard() (*guard, error) {
	g := &guard{}
	if err := g.renew(); err != nil {
		return nil, err
	}
	return g, nil
}

// renew makes fresh secrets: a launch token for a new link, a new session
// and its anti-forgery token. The session a spent link gave — a browser
// that crashed, or a page left open elsewhere — no longer reads or acts.
func (g *guard) renew() error {
	launch, err := secret()
	if err != nil {
		return err
	}
	sess, err := secret()
	if err != nil {
		return err
	}
	m := hmac.New(sha256.New, []byte(sess))
	m.Write([]byte("laserbrain ui: the page's anti-forgery token"))
	g.mu.Lock()
	defer g.mu.Unlock()
	g.launch, g.sess, g.csrf = launch, sess, hex.EncodeToString(m.Sum(nil))
	return nil
}

// secrets are the session and the page's token now (they change on renew).
func (g *guard) secrets() (sess, csrf string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sess, g.csrf
}

// bind fixes where the server listens: the cookie is named by the port (a
// browser shares cookies across a host's ports), and the Host and Origin
// an answer accepts are that address's.
func (g *guard) bind(addr net.Addr) {
	tcp, _ := addr.(*net.TCPAddr)
	port := "0"
	if tcp != nil {
		port = strconv.Itoa(tcp.Port)
	}
	g.cookie = "laserbrain_ui_" + port
	g.hosts, g.origins = map[string]bool{}, map[string]bool{}
	names := []string{"localhost"}
	if tcp != nil {
		names = append(names, tcp.IP.String())
		if tcp.IP.To4() == nil {
			names = append(names, "["+tcp.IP.String()+"]")
		}
	}
	for _, n := range names {
		if strings.Contains(n, ":") && !strings.HasPrefix(n, "[") {
			continue
		}
		h := n + ":" + port
		g.hosts[h] = true
		g.origins["http://"+h] = true
	}
}

// errForbidden is every refusal of a request without the session, from
// another host or origin, or without the page's token: 403.
var errForbidden = errors.New("forbidden")

// exchange spends the launch token: the session's cookie when token is it
// and it was not spent yet (taken with the token, so a link renewed
// meanwhile gives no one the new session).
func (g *guard) exchange(token string) (*http.Cookie, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.launch == "" || subtle.ConstantTimeCompare([]byte(token), []byte(g.launch)) != 1 {
		return nil, false
	}
	g.launch = ""
	return &http.Cookie{Name: g.cookie, Value: g.sess, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}, true
}

// host checks the Host header: a page on another name (DNS rebinding)
// reads nothing.
func (g *guard) host(r *http.Request) error {
	if !g.hosts[r.Host] {
		return fmt.Errorf("%w: Host %q is not this server's", errForbidden, r.Host)
	}
	return nil
}

// session checks the session cookie.
func (g *guard) session(r *http.Request) error {
	if err := g.host(r); err != nil {
		return err
	}
	sess, _ := g.secrets()
	c, err := r.Cookie(g.cookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(sess)) != 1 {
		return fmt.Errorf("%w: no session: open the one-time link laserbrain ui printed (press Enter where it runs for a new one)", errForbidden)
	}
	return nil
}

// act checks an act: the session, the server's own Origin (a browser
// sends it with every POST; another site's page cannot forge it), the
// fetch metadata when the browser gives it, and the page's token.
func (g *guard) act(r *http.Request) error {
	if err := g.session(r); err != nil {
		return err
	}
	if o := r.Header.Get("Origin"); !g.origins[o] {
		return fmt.Errorf("%w: Origin %q is not this server's", errForbidden, o)
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return fmt.Errorf("%w: a %s request", errForbidden, s)
	}
	_, csrf := g.secrets()
	if t := r.Header.Get(csrfHeader); subtle.ConstantTimeCompare([]byte(t), []byte(csrf)) != 1 {
		return fmt.Errorf("%w: the page's token is missing or wrong (%s)", errForbidden, csrfHeader)
	}
	return nil
}

// csrfHeader carries the page's token on every act.
const csrfHeader = "X-Laserbrain-Token"
