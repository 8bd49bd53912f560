package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/laserkit/laserkit/operator"
	"github.com/laserkit/laserkit/operator/policyschema"
	"github.com/laserkit/laserkit/supercode/agentrun"
	"github.com/laserkit/laserkit/supercode/fleet"
	"github.com/laserkit/laserkit/supercode/supervise"
)

// The person's acts. Each one needs the guard's act check (session, Host,
// Origin, the page's token), is journaled as the person's by the same
// function the command line uses, and answers JSON: {"message"} on
// success, {"error"} with a status saying what was wrong.

// actError is an act refused for what was asked (4xx).
type actError struct {
	status int
	msg    string
}

func (e *actError) Error() string { return e.msg }

func badAct(status int, format string, a ...any) error {
	return &actError{status: status, msg: fmt.Sprintf(format, a...)}
}

// maxAct bounds an act's body.
const maxAct = 64 << 10

func (s *Server) act(do func(r *http.Request, body map[string]string) (string, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := s.g.act(r); err != nil {
			fmt.Fprintf(s.o.Log, "laserbrain ui: refused %s %s: %v\n", r.Method, r.URL.Path, err)
			writeJSON(w, http.StatusForbidden, map[string]string{"error": err.Error()})
			return
		}
		var body map[string]string
		raw, err := io.ReadAll(io.LimitReader(r.Body, maxAct+1))
		if err == nil && len(raw) > maxAct {
			err = fmt.Errorf("the request is larger than %d bytes", maxAct)
		}
		if err == nil {
			err = json.Unmarshal(raw, &body)
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the request is not a JSON object of strings: " + err.Error()})
			return
		}
		msg, err := do(r, body)
		var ae *actError
		switch {
		case errors.As(err, &ae):
			writeJSON(w, ae.status, map[string]string{"error": ae.msg})
		case err != nil:
			fmt.Fprintf(s.o.Log, "laserbrain ui: %s: %v\n", r.URL.Path, err)
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		default:
			fmt.Fprintf(s.o.Log, "laserbrain ui: %s\n", msg)
			writeJSON(w, http.StatusOK, map[string]string{"message": msg})
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// by is who the journal says acted.
func (s *Server) by() string { return s.o.By + " (laserbrain ui)" }

// release lifts the halt on body's agent (supervise.Release).
func (s *Server) release(r *http.Request, body map[string]string) (string, error) {
	agent := strings.TrimSpace(body["agent"])
	if agent == "" {
		return "", badAct(http.StatusBadRequest, "release: which agent? (agent)")
	}
	h, err := supervise.Release(r.Context(), s.o.Fleet, s.o.FleetID, agent, s.by(), strings.TrimSpace(body["reason"]), s.o.Now())
	if errors.Is(err, fleet.ErrNotFound) {
		return "", badAct(http.StatusNotFound, "%v", err)
	}
	var broken *fleet.JournalBrokenError
	if errors.As(err, &broken) {
		return fmt.Sprintf("released %s, but the release is not journaled: %v", h.Agent, err), nil
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("released %s (halted %s by %s: %s)", h.Agent, h.At.UTC().Format(time.RFC3339), h.By, h.Reason), nil
}

// answer answers an open escalation (supervise.AnswerEscalation).
func (s *Server) answer(r *http.Request, body map[string]string) (string, error) {
	id := strings.TrimSpace(body["id"])
	if id == "" {
		return "", badAct(http.StatusBadRequest, "answer: which question? (id)")
	}
	q, err := supervise.AnswerEscalation(r.Context(), s.o.Fleet, s.o.FleetID, id, s.by(), body["decision"], s.o.Now())
	switch {
	case errors.Is(err, fleet.ErrNotFound):
		return "", badAct(http.StatusNotFound, "%v", err)
	case errors.Is(err, supervise.ErrAnswered):
		return "", badAct(http.StatusConflict, "%v", err)
	case err != nil:
		return "", err
	}
	if q.Decision == "" {
		return fmt.Sprintf("answered %s without a word", id), nil
	}
	return fmt.Sprintf("answered %s: %q (told to %s at their next event)", id, q.Decision, strings.Join(q.Agents, ", ")), nil
}

// authorizeFor is how long an authorization from the page holds: it is a
// yes to one action about to be retried.
const authorizeFor = 15 * time.Minute

// authorize lets one run take one exact action once (supervise.Authorize):
// the action a gate decision on the run named, refused to the same
// actions `laserbrain authorize` refuses.
func (s *Server) authorize(r *http.Request, body map[string]string) (string, error) {
	run := strings.TrimSpace(body["run"])
	action := operator.ActionKey(body["action"])
	switch {
	case run == "":
		return "", badAct(http.StatusBadRequest, "authorize: which run? (run)")
	case action == "":
		return "", badAct(http.StatusBadRequest, "authorize: which action? (action)")
	}
	fr, err := s.o.Fleet.Run(r.Context(), run)
	if errors.Is(err, fleet.ErrNotFound) || err == nil && fr.Fleet != s.o.FleetID {
		return "", badAct(http.StatusNotFound, "authorize: run %s is not one of this fleet's", run)
	}
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(action, "write /") {
		dir := fr.Dir
		if dir == "" {
			dir = s.o.Repo
		}
		ok, why, err := agentrun.Authorizable(action, dir, policyschema.Validate)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", badAct(http.StatusBadRequest, "nothing authorized: %s", why)
		}
	}
	now := s.o.Now().UTC()
	a := fleet.Authorization{ID: fleet.NewID(), Fleet: s.o.FleetID, Run: run, Action: action, Reason: strings.TrimSpace(body["reason"]),
		By: s.by(), Created: now, Expires: now.Add(authorizeFor), Uses: 1}
	if err := supervise.Authorize(r.Context(), s.o.Fleet, a); err != nil {
		return "", err
	}
	return fmt.Sprintf("authorized %q once for run %s, until %s (authorization %s)", action, run, a.Expires.Format(time.RFC3339), a.ID), nil
}
