package pgdsn

import (
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/laserkit/laserkit/internal/text"
)

// keyValuePassword matches password=... in a libpq key/value DSN, quoted or
// not (libpq quotes with single quotes and escapes with backslash).
// Compiled on first use: every laserbrain process links this package, few
// mask a connection string.
var keyValuePassword = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)
})

// urlQueryPassword matches ?password=... or &password=... in a URL DSN.
var urlQueryPassword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)([?&]password=)[^&#]*`) })

// Mask hides the password of a connection string, in URL form
// (postgres://user:pw@host) and key/value form (password=pw), as ***.
func Mask(dsn string) string {
	if i := strings.Index(dsn, "://"); i >= 0 {
		i += 3
		end := len(dsn)
		if j := strings.IndexAny(dsn[i:], "/?#"); j >= 0 {
			end = i + j
		}
		if at := strings.LastIndex(dsn[i:end], "@"); at >= 0 {
			userinfo := dsn[i : i+at]
			if c := strings.Index(userinfo, ":"); c >= 0 {
				dsn = dsn[:i] + userinfo[:c] + ":***" + dsn[i+at:]
			}
		}
		return urlQueryPassword().ReplaceAllString(dsn, "${1}***")
	}
	return keyValuePassword().ReplaceAllString(dsn, "${1}***")
}

// dsnPassword extracts the password of dsn, if any, so that it can also be
// scrubbed from driver error messages that echo it.
func dsnPassword(dsn string) string {
	if strings.Contains(dsn, "://") {
		if u, err := url.Parse(dsn); err == nil {
			if pw, ok := u.User.Password(); ok {
				return pw
			}
			if pw := u.Query().Get("password"); pw != "" {
				return pw
			}
		}
		return ""
	}
	m := keyValuePassword().FindStringSubmatch(dsn)
	if m == nil {
		return ""
	}
	pw := m[2]
	if len(pw) >= 2 && pw[0] == '\'' {
		pw = strings.ReplaceAll(pw[1:len(pw)-1], `\'`, `'`)
	}
	return pw
}

// Scrub makes an error message safe and loggable: one line, and the DSN's
// password replaced wherever the driver echoed it.
func Scrub(msg, dsn string) string {
	if dsn != "" {
		msg = strings.ReplaceAll(msg, dsn, Mask(dsn))
	}
	if pw := dsnPassword(dsn); len(pw) >= 3 {
		msg = strings.ReplaceAll(msg, pw, "***")
	}
	msg = keyValuePassword().ReplaceAllString(msg, "${1}***")
	return text.OneLine(msg)
}
