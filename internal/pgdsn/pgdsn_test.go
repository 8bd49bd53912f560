package pgdsn

import "testing"

func TestMask(t *testing.T) {
	cases := map[string]string{
		"postgres://localhost/oneiro":                      "postgres://localhost/oneiro",
		"postgres://user:pw@host:5432/oneiro":              "postgres://user:***@host:5432/oneiro",
		"postgresql://u:p%40ss@h/db?sslmode=disable":       "postgresql://u:***@h/db?sslmode=disable",
		"postgres://u@h/db":                                "postgres://u@h/db",
		"postgres://h/db?user=u&password=pw&sslmode=x":     "postgres://h/db?user=u&password=***&sslmode=x",
		"host=h user=u password=secret dbname=oneiro":      "host=h user=u password=*** dbname=oneiro",
		"host=h password='with space\\' quote' dbname=db":  "host=h password=*** dbname=db",
		"host=h PASSWORD = x dbname=db":                    "host=h PASSWORD = *** dbname=db",
		"postgres://user:p:w@h/db":                         "postgres://user:***@h/db",
		"postgres://user:pw@h/db?application_name=a@b/c:d": "postgres://user:***@h/db?application_name=a@b/c:d",
	}
	for in, want := range cases {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

// A driver error that echoes the password (whole DSN or the password
// alone) comes out without it, on one line.
func TestScrub(t *testing.T) {
	dsn := "postgres://ann:s3cr3tpw@db.example/fleet"
	msg := "failed to connect to `" + dsn + "`:\n  password authentication failed (password s3cr3tpw)"
	got := Scrub(msg, dsn)
	want := "failed to connect to `postgres://ann:***@db.example/fleet`: password authentication failed (password ***)"
	if got != want {
		t.Errorf("Scrub = %q\nwant    %q", got, want)
	}
}
