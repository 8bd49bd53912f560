// Command laserbrain-otel sends one ended agent run to an OpenTelemetry
// collector: laserbrain run hands it the run's record as JSON on standard
// input when telemetry is on (supercode/telemetry says when), so that
// laserbrain itself links no OpenTelemetry code.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/laserkit/laserkit/internal/version"
	"github.com/laserkit/laserkit/supercode/telemetry"
	"github.com/laserkit/laserkit/supercode/telemetry/otlp"
)

const usage = `usage: laserbrain-otel export|journal [--endpoint URL] < RECORD.json
       laserbrain-otel receive [--forward URL] [--forward-traces|--forward-metrics|--forward-logs URL]

export sends one ended run (the JSON record laserbrain run writes), journal
a supervisor's journal records (what laserbrain supervise hands over after
each round), to the OTLP/HTTP
endpoint the environment names (OTEL_EXPORTER_OTLP_ENDPOINT or
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), else to --endpoint (a base URL, as the
project policy names it). LASERBRAIN_OTEL=off sends nothing. Exit 0 when
every span was delivered, 1 when some were not (said on standard error),
2 on bad usage or a record it cannot read.

receive takes, on a loopback port of its own, the OTLP/HTTP an agent's
client sends under laserbrain run: it writes its address, then each model
request the client reported, as JSON lines on standard output, forwards
everything it receives to the person's own endpoints, with the headers
OTEL_EXPORTER_OTLP_HEADERS names — each signal to its own URL as given
(--forward-traces, --forward-metrics, --forward-logs), anything else under
the base URL --forward — and stops when its standard input ends.
`

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)) }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "version") {
		fmt.Fprint(stdout, version.Get("laserbrain-otel").Text())
		return 0
	}
	if len(args) >= 1 && args[0] == "receive" {
		return receive(args[1:], stdin, stdout, stderr, getenv)
	}
	endpoint := ""
	switch {
	case len(args) == 1 && (args[0] == "export" || args[0] == "journal"):
	case len(args) == 3 && (args[0] == "export" || args[0] == "journal") && args[1] == "--endpoint":
		endpoint = args[2]
	default:
		fmt.Fprint(stderr, usage)
		return 2
	}
	s, err := telemetry.Configure(getenv, endpoint)
	if err != nil {
		fmt.Fprintf(stderr, "laserbrain-otel: %v\n", err)
		return 2
	}
	d := json.NewDecoder(stdin)
	d.DisallowUnknownFields()
	var send func() (int64, error)
	ctx, v := context.Background(), version.Get("laserbrain").Version
	if args[0] == "journal" {
		var j telemetry.Journal
		if err := d.Decode(&j); err != nil {
			fmt.Fprintf(stderr, "laserbrain-otel: the journal records on standard input: %v\n", err)
			return 2
		}
		send = func() (int64, error) { return otlp.ExportJournal(ctx, s, j, "laserbrain", v) }
	} else {
		var rec telemetry.Record
		if err := d.Decode(&rec); err != nil {
			fmt.Fprintf(stderr, "laserbrain-otel: the run's record on standard input: %v\n", err)
			return 2
		}
		send = func() (int64, error) { return otlp.Export(ctx, s, rec, "laserbrain", v) }
	}
	if !s.On {
		return 0 // nothing configured: nothing to send
	}
	if _, err := send(); err != nil {
		fmt.Fprintf(stderr, "laserbrain-otel: %v\n", err)
		return 1
	}
	return 0
}
