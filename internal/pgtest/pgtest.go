package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/internal/testenv"
)

// AdminEnv names the variable holding a superuser DSN (any database) on the
// test server; scripts/with-postgres.sh sets it.
const AdminEnv = "LASERKIT_TEST_PG_DSN"

const setupTimeout = 30 * time.Second

var warnOnce sync.Once

// skipMessage is what a test says when there is no server to run against.
const skipMessage = "no PostgreSQL for the integration tests: " + AdminEnv +
	" is unset. Run `make test` (scripts/with-postgres.sh starts a throwaway server, " +
	"installing PostgreSQL as root when missing) or set " + AdminEnv + " to a superuser DSN."

// AdminDSN returns the superuser DSN of the test server, or skips t with a
// message that says how to get one (printed on stderr too, once); under
// CI=true it fails t instead.
func AdminDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(AdminEnv)
	if dsn == "" {
		// CI runs make test, which starts a server: a skip there would
		// hide every database test, so testenv fails it there.
		if !testenv.CI() {
			warnOnce.Do(func() { fmt.Fprintln(os.Stderr, "pgtest: "+skipMessage) })
		}
		testenv.SkipOrFail(t, "%s", skipMessage)
	}
	return dsn
}

// NewDatabase creates an empty database for t on the test server and drops
// it when t ends; it returns the database's DSN. A server that is configured
// but unreachable fails the test: only an absent server is a reason to skip.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, AdminDSN(t))
}

func newDatabase(t testing.TB, admin string) string {
	t.Helper()
	name := databaseName(t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := adminExec(ctx, admin, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		if err := adminExec(ctx, admin, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: dropping database %s: %v", name, err)
		}
	})
	dsn, err := WithDatabase(admin, name)
	if err != nil {
		t.Fatal(err)
	}
	return dsn
}

func adminExec(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

var unsafeName = regexp.MustCompile(`[^a-z0-9]+`)

// databaseName is unique per call and recognisable per test.
func databaseName(test string) string {
	base := strings.Trim(unsafeName.ReplaceAllString(strings.ToLower(test), "_"), "_")
	if len(base) > 40 {
		base = base[:40]
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "lk_" + base + "_" + hex.EncodeToString(b[:])
}

// WithDatabase returns dsn pointing at database name instead, for both URL
// and key=value connection strings.
func WithDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("pgtest: %s is not a valid URL DSN", AdminEnv)
		}
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	// In key=value form a later keyword overrides an earlier one.
	return dsn + " dbname='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(name) + "'", nil
}

// URL is dsn as a postgres:// URL (what LASERBRAIN_STORE takes), for a
// key=value DSN such as the test server's: a Unix socket directory goes in
// the host query parameter.
func URL(t testing.TB, dsn string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return dsn
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	u := url.URL{Scheme: "postgres", Path: "/" + cfg.Database}
	if cfg.Password != "" {
		u.User = url.UserPassword(cfg.User, cfg.Password)
	} else {
		u.User = url.User(cfg.User)
	}
	q := url.Values{}
	if strings.HasPrefix(cfg.Host, "/") {
		q.Set("host", cfg.Host)
		if cfg.Port != 0 && cfg.Port != 5432 {
			q.Set("port", fmt.Sprint(cfg.Port))
		}
	} else {
		u.Host = fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
