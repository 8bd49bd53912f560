package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/ponder/oca"
)

// Episodic event types (free text in OCA).
const (
	epStart     = "ponder_start"
	epPass      = "ponder_pass"
	epConverged = "ponder_converged"
	epStopped   = "ponder_stopped"
	epApplied   = "ponder_applied"
)

// Importance scores of ponder's episodes; ponder_pass keeps the column default.
const (
	importanceStart     = 0.7
	importanceConverged = 0.8
	importanceApplied   = 0.75
)

// sourceLayer is cognitive_events.source_layer for everything ponder emits.
const sourceLayer = "ponder"

// resolutionMethod marks deliberations rows ponder owns.
const resolutionMethod = "ponder-pass"

// insertEpisodeSQL writes one episodic row. surprise_magnitude is always
// given, so a NULL is explicit rather than the column's 0.0 default.
const insertEpisodeSQL = `
INSERT INTO episodic_memory (event_type, content, prediction, actual_outcome, surprise_magnitude, importance_score)
VALUES ($1, $2, $3, $4, $5::float8, $6::float8)
RETURNING id`

// insertPassEpisodeSQL is insertEpisodeSQL for ponder_pass, which leaves
// importance_score to the column default.
const insertPassEpisodeSQL = `
INSERT INTO episodic_memory (event_type, content, prediction, actual_outcome, surprise_magnitude)
VALUES ($1, $2, $3, $4, $5::float8)
RETURNING id`

// priorPonderingSQL is the OCA bridge's prior-pondering query with the subject as a parameter and
// backslash as the explicit LIKE escape — matched against the subject part
// of the content only ($2, subjectRE), so that another session's lens=
// or project= text is not taken for its subject. A content ponder did not
// write (no such suffix) is matched whole, as the bridge's query matches it.
const priorPonderingSQL = `
SELECT content, actual_outcome, timestamp
FROM episodic_memory
WHERE event_type IN ('ponder_converged', 'ponder_stopped', 'ponder_start')
  AND coalesce(substring(content from $2::text), content) ILIKE '%' || $1::text || '%' ESCAPE '\'
ORDER BY timestamp DESC, id DESC
LIMIT 5`

// subjectRE takes the subject out of an episodic row's content,
// "[<slug>] <subject> :: lens=<v> project=<v> passes=<n> mode=deliberate
// [pass=<n>]" (sessionContent), reading the fixed suffix from the end: a
// value there is one bare token or a JSON string (fieldValue), so a subject
// that itself holds " :: lens=" is read whole. (PostgreSQL's regular
// expressions; '.' matches a newline.)
const subjectRE = `^\[[^]]*\] (.*) :: lens=(?:"(?:[^"\\]|\\.)*"|[^"\\[:space:]]+) project=(?:"(?:[^"\\]|\\.)*"|[^"\\[:space:]]+) passes=[0-9]+ mode=deliberate(?: pass=[0-9]+)?$`

// likeLiteral escapes LIKE's metacharacters so s matches only itself.
func likeLiteral(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// PriorPondering runs before the session's own start row is written, so it
// finds only earlier sessions.
func (s *Store) PriorPondering(ctx context.Context, subject string) ([]oca.Episode, error) {
	rows, err := s.conn.Query(ctx, priorPonderingSQL, likeLiteral(subject), subjectRE)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (oca.Episode, error) {
		var e oca.Episode
		err := r.Scan(&e.Content, &e.ActualOutcome, &e.Timestamp)
		return e, err
	})
}

// RecordStart writes the ponder_start episode. The session's reference is
// its domain, the key every other row of the session carries.
func (s *Store) RecordStart(ctx context.Context, se oca.Session) (oca.StartResult, error) {
	if err := checkSession(se); err != nil {
		return oca.StartResult{}, err
	}
	imp := importanceStart
	var id int64
	err := s.conn.QueryRow(ctx, insertEpisodeSQL, epStart, sessionContent(se, 0), nil, nil, nil, &imp).Scan(&id)
	if err != nil {
		return oca.StartResult{}, err
	}
	return oca.StartResult{ID: id, EpisodeID: id, SessionRef: se.Domain()}, nil
}

// checkSession rejects a session that would write rows no query can find.
func checkSession(se oca.Session) error {
	if se.Slug == "" {
		return errors.New("session has no slug")
	}
	if strings.ContainsAny(se.Slug, "[]") {
		return fmt.Errorf("slug %q contains [ or ]", se.Slug)
	}
	return nil
}

// deliberationSQL opens (or, on the judge fallback, writes complete) the
// pass's deliberations row and emits deliberation_result carrying its id,
// in one statement.
const deliberationSQL = `
WITH d AS (
	INSERT INTO deliberations (decision, stakes,
		skeptic_argument, skeptic_confidence, builder_argument, builder_confidence,
		dreamer_argument, dreamer_confidence, empath_argument, empath_confidence,
		resolution, resolution_method, completed_at)
	VALUES ($1, $2, $3, $4::float8, $5, $6::float8, $7, $8::float8, $9, $10::float8,
		$11::text, $12, CASE WHEN $11::text IS NULL THEN NULL ELSE now() END)
	RETURNING id
), e AS (
	INSERT INTO cognitive_events (event_type, source_layer, target_layer, payload)
	SELECT 'deliberation_result', $13, $14, $15::jsonb || jsonb_build_object('deliberation_id', d.id)
	FROM d
	RETURNING id
)
SELECT d.id, e.id FROM d, e`

// decision is the deliberations row's decision text; the read-back queries
// select a session's rows by its "ponder <slug> pass" prefix.
func decision(se oca.Session, pass int) string {
	return fmt.Sprintf("ponder %s pass %d: revise the finding set for %s", se.Slug, pass, se.Subject)
}

// spoken returns a voice's argument, or nil for a silent (blank) voice.
func spoken(v oca.Voice) *string {
	if v.Argument == nil || strings.TrimSpace(*v.Argument) == "" {
		return nil
	}
	return v.Argument
}

func (s *Store) RecordDeliberation(ctx context.Context, r oca.DeliberationRecord) (oca.DeliberationResult, error) {
	if err := checkSession(r.Session); err != nil {
		return oca.DeliberationResult{}, err
	}
	stakes := r.Stakes
	if stakes == "" {
		stakes = "medium"
	}
	voices := 0
	args := make([]*string, 4)
	for i, v := range []oca.Voice{r.Skeptic, r.Builder, r.Dreamer, r.Empath} {
		if args[i] = spoken(v); args[i] != nil {
			voices++
		}
	}
	kv := map[string]any{"slug": r.Session.Slug, "pass": r.Pass, "voices": voices, "stakes": stakes}
	if r.Summary != nil {
		// Only the fallback knows the resolution when the event fires.
		kv["resolution"] = *r.Summary
	}
	pl, err := payload(kv)
	if err != nil {
		return oca.DeliberationResult{}, err
	}
	res := oca.DeliberationResult{Voices: voices}
	err = s.conn.QueryRow(ctx, deliberationSQL,
		decision(r.Session, r.Pass), stakes,
		args[0], r.Skeptic.Confidence, args[1], r.Builder.Confidence,
		args[2], r.Dreamer.Confidence, args[3], r.Empath.Confidence,
		r.Summary, resolutionMethod, sourceLayer, r.Session.Domain(), pl,
	).Scan(&res.DeliberationID, &res.EventID)
	if err != nil {
		return oca.DeliberationResult{}, err
	}
	return res, nil
}

// resolveSQL closes an open row ponder opened for this session; a resolved
// row, or anyone else's, is left alone.
const resolveSQL = `
UPDATE deliberations SET resolution = $2, completed_at = now()
WHERE id = $1 AND resolution_method = 'ponder-pass' AND resolution IS NULL AND starts_with(decision, $3)
RETURNING id`

func (s *Store) ResolveDeliberation(ctx context.Context, se oca.Session, id int64, summary string) (oca.ResolveResult, error) {
	if err := checkSession(se); err != nil {
		return oca.ResolveResult{}, err
	}
	var got int64
	err := s.conn.QueryRow(ctx, resolveSQL, id, summary, "ponder "+se.Slug+" pass ").Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		return oca.ResolveResult{DeliberationID: id, Resolved: false}, nil
	}
	if err != nil {
		return oca.ResolveResult{}, err
	}
	return oca.ResolveResult{DeliberationID: id, Resolved: true}, nil
}

const observationSQL = `
WITH o AS (
	INSERT INTO metacognitive_observations (target_layer, observation_type, description, evidence, severity,
		recommended_intervention)
	VALUES ($1, $2, $3, $4::jsonb, $5::float8, $6)
	RETURNING id
), e AS (
	INSERT INTO cognitive_events (event_type, source_layer, target_layer, priority, payload)
	SELECT 'metacognition_alert', $7, $1, $5::float8, $8::jsonb || jsonb_build_object('observation_id', o.id)
	FROM o
	RETURNING id
)
SELECT o.id, e.id FROM o, e`

func (s *Store) RecordObservation(ctx context.Context, r oca.ObservationRecord) (oca.ObservationResult, error) {
	if err := checkSession(r.Session); err != nil {
		return oca.ObservationResult{}, err
	}
	if !slices.Contains(oca.ObservationTypes, r.Type) {
		return oca.ObservationResult{}, fmt.Errorf("unknown observation type %q", r.Type)
	}
	if r.Severity != r.Severity || r.Severity < 0 || r.Severity > 1 {
		return oca.ObservationResult{}, fmt.Errorf("severity %v is outside [0,1]", r.Severity)
	}
	evidence := "{}"
	if len(r.Evidence) > 0 {
		var err error
		if evidence, err = canonicalJSON(r.Evidence, "evidence"); err != nil {
			return oca.ObservationResult{}, err
		}
	}
	pl, err := payload(map[string]any{"slug": r.Session.Slug, "type": r.Type, "severity": r.Severity})
	if err != nil {
		return oca.ObservationResult{}, err
	}
	var res oca.ObservationResult
	err = s.conn.QueryRow(ctx, observationSQL, r.Session.Domain(), r.Type, r.Description, evidence, r.Severity,
		r.Intervention, sourceLayer, pl).Scan(&res.ObservationID, &res.EventID)
	if err != nil {
		return oca.ObservationResult{}, err
	}
	return res, nil
}

// lockSQL takes the session's lifecycle lock, waiting for it.
const lockSQL = `SELECT pg_advisory_xact_lock(hashtext($1))`

// convergedSQL writes the closing episode, expires every pending forecast
// of the session (tested_at stays NULL: nothing tested them) and emits
// reasoning_trace_created, in one statement.
const convergedSQL = `
WITH ep AS (
	INSERT INTO episodic_memory (event_type, content, prediction, actual_outcome, surprise_magnitude, importance_score)
	VALUES ($1, $2, NULL, $3, NULL::float8, $4::float8)
	RETURNING id
), ex AS (
	UPDATE hypotheses SET status = 'expired'
	WHERE domain = $5 AND status = 'pending'
	RETURNING id
), ev AS (
	INSERT INTO cognitive_events (event_type, source_layer, target_layer, payload)
	SELECT 'reasoning_trace_created', $6, $5,
		$7::jsonb || jsonb_build_object('episode_id', ep.id, 'expiredHypotheses', (SELECT count(*) FROM ex))
	FROM ep
	RETURNING id
)
SELECT ep.id, ev.id, (SELECT count(*) FROM ex) FROM ep, ev`

func (s *Store) RecordConverged(ctx context.Context, r oca.ConvergedRecord) (oca.ConvergedResult, error) {
	if err := checkSession(r.Session); err != nil {
		return oca.ConvergedResult{}, err
	}
	outcome, err := optionalJSON(r.Outcome, "final counts")
	if err != nil {
		return oca.ConvergedResult{}, err
	}
	event, word := epStopped, "stopped"
	if r.Converged {
		event, word = epConverged, "converged"
	}
	pl, err := payload(map[string]any{"slug": r.Session.Slug, "outcome": word, "passes": r.Passes})
	if err != nil {
		return oca.ConvergedResult{}, err
	}
	var res oca.ConvergedResult
	err = pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		// Wait for a judge of this session to finish (within ctx), so a
		// forecast it is opening right now is expired too, never orphaned.
		if _, err := tx.Exec(ctx, lockSQL, r.Session.Domain()); err != nil {
			return err
		}
		return tx.QueryRow(ctx, convergedSQL, event, sessionContent(r.Session, 0), outcome, importanceConverged,
			r.Session.Domain(), sourceLayer, pl).Scan(&res.EpisodeID, &res.EventID, &res.ExpiredHypotheses)
	})
	if err != nil {
		return oca.ConvergedResult{}, err
	}
	return res, nil
}

// expireSQL expires every pending forecast of the session (tested_at
// stays NULL: nothing tested them).
const expireSQL = `
WITH ex AS (
	UPDATE hypotheses SET status = 'expired'
	WHERE domain = $1 AND status = 'pending'
	RETURNING id
)
SELECT count(*) FROM ex`

// ExpireForecasts expires a session's pending forecasts, under the
// lifecycle lock as decide stop does, so a judge opening one right now is
// waited for and its forecast expired too.
func (s *Store) ExpireForecasts(ctx context.Context, se oca.Session) (oca.ExpireResult, error) {
	if err := checkSession(se); err != nil {
		return oca.ExpireResult{}, err
	}
	var res oca.ExpireResult
	err := pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, lockSQL, se.Domain()); err != nil {
			return err
		}
		return tx.QueryRow(ctx, expireSQL, se.Domain()).Scan(&res.ExpiredHypotheses)
	})
	if err != nil {
		return oca.ExpireResult{}, err
	}
	return res, nil
}

func (s *Store) RecordApply(ctx context.Context, r oca.ApplyRecord) (oca.ApplyResult, error) {
	if err := checkSession(r.Session); err != nil {
		return oca.ApplyResult{}, err
	}
	outcome, err := optionalJSON(r.Outcome, "apply outcome")
	if err != nil {
		return oca.ApplyResult{}, err
	}
	imp := importanceApplied
	var id int64
	err = s.conn.QueryRow(ctx, insertEpisodeSQL, epApplied, sessionContent(r.Session, 0), nil, outcome, nil, &imp).Scan(&id)
	if err != nil {
		return oca.ApplyResult{}, err
	}
	return oca.ApplyResult{ID: id, EpisodeID: id}, nil
}

// optionalJSON canonicalises caller JSON; absent is SQL NULL.
func optionalJSON(raw json.RawMessage, what string) (*string, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	s, err := canonicalJSON(raw, what)
	if err != nil {
		return nil, err
	}
	return &s, nil
}

const openObservationsSQL = `
SELECT id, observation_type, description, severity, recommended_intervention, coalesce(evidence, '{}'::jsonb), timestamp
FROM metacognitive_observations
WHERE target_layer = $1 AND intervention_applied = false
ORDER BY severity DESC NULLS LAST, timestamp DESC, id DESC`

func (s *Store) OpenObservations(ctx context.Context, se oca.Session) ([]oca.Observation, error) {
	rows, err := s.conn.Query(ctx, openObservationsSQL, se.Domain())
	if err != nil {
		return nil, err
	}
	obs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (oca.Observation, error) {
		var o oca.Observation
		var sev *float64
		var evidence []byte
		err := r.Scan(&o.ID, &o.Type, &o.Description, &sev, &o.Intervention, &evidence, &o.Timestamp)
		if sev != nil {
			o.Severity = *sev
		} else {
			o.Severity = 0.5 // OCA's default; a NULL was never a measured severity
		}
		o.Evidence = json.RawMessage(evidence)
		return o, err
	})
	if err != nil {
		return nil, err
	}
	if obs == nil {
		obs = []oca.Observation{} // none open is an answer, not a failure
	}
	return obs, nil
}

// sessionRowsSQL lists what a session left in the database: its episodes
// (content "[<slug>] …", $1 the bracketed prefix as a LIKE literal), its
// deliberations (decision "ponder <slug> pass N: …", $2) and its
// observations (target_layer, $3).
const sessionRowsSQL = `
SELECT 'episode', event_type, content, NULL::bigint, NULL::bool, NULL::float8
FROM episodic_memory
WHERE event_type IN ('ponder_start', 'ponder_pass', 'ponder_converged', 'ponder_stopped', 'ponder_applied')
  AND content LIKE $1::text || '%' ESCAPE '\'
UNION ALL
SELECT 'deliberation', NULL, decision, id, resolution IS NOT NULL, NULL
FROM deliberations
WHERE resolution_method = 'ponder-pass' AND decision LIKE $2::text || '%' ESCAPE '\'
UNION ALL
SELECT 'observation', observation_type, description, id, NULL, severity
FROM metacognitive_observations
WHERE target_layer = $3
ORDER BY 1, 4`

// SessionRows reads what the database holds of a session.
func (s *Store) SessionRows(ctx context.Context, se oca.Session) (oca.SessionRows, error) {
	if err := checkSession(se); err != nil {
		return oca.SessionRows{}, err
	}
	episodes := likeLiteral("[" + se.Slug + "] ")
	delibs := likeLiteral("ponder " + se.Slug + " pass ")
	rows, err := s.conn.Query(ctx, sessionRowsSQL, episodes, delibs, se.Domain())
	if err != nil {
		return oca.SessionRows{}, err
	}
	defer rows.Close()
	out := oca.SessionRows{Passes: []int{}, Deliberations: map[int]oca.DeliberationRow{}, Observations: []oca.ObservationRow{}}
	prefix := "ponder " + se.Slug + " pass "
	for rows.Next() {
		var kind, text string
		var typ *string
		var id *int64
		var resolved *bool
		var severity *float64
		if err := rows.Scan(&kind, &typ, &text, &id, &resolved, &severity); err != nil {
			return oca.SessionRows{}, err
		}
		switch kind {
		case "episode":
			switch *typ {
			case epStart:
				out.Start = true
			case epConverged, epStopped:
				out.End = true
			case epApplied:
				out.Applied = true
			case epPass:
				if i := strings.LastIndex(text, " pass="); i >= 0 {
					if n, err := strconv.Atoi(text[i+len(" pass="):]); err == nil && !slices.Contains(out.Passes, n) {
						out.Passes = append(out.Passes, n)
					}
				}
			}
		case "deliberation":
			num, _, _ := strings.Cut(strings.TrimPrefix(text, prefix), ":")
			if n, err := strconv.Atoi(num); err == nil {
				if _, seen := out.Deliberations[n]; !seen {
					out.Deliberations[n] = oca.DeliberationRow{ID: *id, Resolved: *resolved}
				}
			}
		case "observation":
			o := oca.ObservationRow{ID: *id, Description: text}
			if typ != nil {
				o.Type = *typ
			}
			if severity != nil {
				o.Severity = *severity
			}
			out.Observations = append(out.Observations, o)
		}
	}
	if err := rows.Err(); err != nil {
		return oca.SessionRows{}, err
	}
	slices.Sort(out.Passes)
	return out, nil
}
