package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/telemetry"
	"github.com/laserkit/laserkit/supercode/telemetry/otlp"
)

// shutdownDeadline bounds the wait, once standard input has ended, for the
// requests the client is still sending.
const shutdownDeadline = 2 * time.Second

// receive runs the OTLP receiver of one run until stdin ends.
func receive(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	rcv := &otlp.Receiver{}
	if len(args)%2 != 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	for i := 0; i < len(args); i += 2 {
		dst := map[string]*string{"--forward": &rcv.Forward.Base, "--forward-traces": &rcv.Forward.Traces,
			"--forward-metrics": &rcv.Forward.Metrics, "--forward-logs": &rcv.Forward.Logs}[args[i]]
		if dst == nil || args[i+1] == "" {
			fmt.Fprint(stderr, usage)
			return 2
		}
		*dst = args[i+1]
	}
	if !rcv.Forward.Empty() {
		rcv.Headers = otlp.ParseHeaders(getenv(telemetry.EnvHeaders))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(stderr, "laserbrain-otel: receive: %v\n", err)
		return 1
	}
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	say := func(r telemetry.Received) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(r)
	}
	rcv.Request = func(at time.Time, req fleet.ModelRequest) { say(telemetry.Received{At: at, Request: &req}) }
	srv := &http.Server{Handler: rcv, ReadHeaderTimeout: 5 * time.Second}
	say(telemetry.Received{Listen: "http://" + ln.Addr().String()})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	_, _ = io.Copy(io.Discard, stdin) // laserbrain run holds it open while the agent runs
	ctx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	_ = srv.Shutdown(ctx)
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "laserbrain-otel: receive: %v\n", err)
	}
	if n, err := rcv.NotForwarded(); n > 0 {
		say(telemetry.Received{NotForwarded: n, ForwardError: err.Error()})
	}
	return 0
}
