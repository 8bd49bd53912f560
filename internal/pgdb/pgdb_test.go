package pgdb

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/laserbrain"
)

// TestWrapUnreachableSaysTheCauseOnce: pgx reports each connection attempt
// (TLS, then plain) in one message, so the dial error came twice behind
// "failed to connect to …". Wrapped, a database that is down is
// unavailable, named once by its network error, and still errors.As-able.
func TestWrapUnreachableSaysTheCauseOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dsn := "postgres://laserkit:secret@127.0.0.1:1/fleet" // sslmode prefer: two attempts
	_, err := pgx.Connect(ctx, dsn)
	if err == nil {
		t.Skip("something answers on 127.0.0.1:1")
	}
	if n := strings.Count(err.Error(), "connection refused"); n < 2 {
		t.Logf("pgx now names the cause %d time(s): %v", n, err)
	}
	w := Wrap(err, dsn)
	msg := w.Error()
	if !errors.Is(w, laserbrain.ErrUnavailable) {
		t.Fatalf("not unavailable: %v", w)
	}
	if strings.Count(msg, "connection refused") != 1 || !strings.Contains(msg, "dial tcp 127.0.0.1:1") ||
		strings.Contains(msg, "failed to connect") || strings.Contains(msg, "secret") || strings.Contains(msg, "in use") {
		t.Fatalf("message: %q", msg)
	}
}
