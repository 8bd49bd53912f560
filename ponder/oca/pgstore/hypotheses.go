package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/laserkit/laserkit/ponder/oca"
)

// The surprise mechanic's constants.
const (
	decay            = 0.6  // forecast = decay × this pass's churn
	confirmTolerance = 0.05 // confirmed iff |forecast − actual| ≤ this
	firstConfidence  = 0.5  // a session's first forecast
)

// Notes recordPass reports about the hypothesis lifecycle.
const (
	LockHeld        = "held"
	Contended       = "contended"
	Closed          = "closed"
	NothingPending  = "nothing-pending"
	Opened          = "opened"
	NoChurnSignal   = "no-churn-signal"
	AlreadyForecast = "already-forecast"
)

// Statements of recordPass's first round trip, sent as one batch inside the
// transaction. The reads after the lock see every commit of the process
// that held it before (READ COMMITTED takes a snapshot per statement).
const (
	tryLockSQL = `SELECT pg_try_advisory_xact_lock(hashtext($1))`
	// pendingSQL finds the forecast made for this pass.
	pendingSQL = `
SELECT id, (source_data->>'forecast_churn')::float8, confidence
FROM hypotheses
WHERE domain = $1 AND status = 'pending' AND (source_data->>'for_pass')::int = $2
ORDER BY id LIMIT 1`
	// previousSQL finds the session's latest forecast made before this pass,
	// whose confidence the next forecast carries.
	previousSQL = `
SELECT confidence, confidence_delta
FROM hypotheses
WHERE domain = $1 AND (source_data->>'pass')::int < $2
ORDER BY (source_data->>'pass')::int DESC, id DESC LIMIT 1`
)

// lifecycleSQL closes the forecast made for pass N and opens the one for
// N+1 in a single data-modifying statement, each with its event. The close
// is scoped to for_pass = N (never the row this statement opens, never a
// row a rerun opened) and the open inserts nothing if this pass already
// forecast: together with the advisory lock, one close and one open per
// pass however many judges run.
//
//	$1 domain  $2 N  $3 close id (NULL: none)  $4 status  $5 surprise
//	$6 confidence_delta  $7 model_update  $8 actual  $9 tested priority
//	$10 tested payload  $11 open?  $12 claim  $13 prediction  $14 confidence
//	$15 source_data  $16 formed payload  $17 source layer
const lifecycleSQL = `
WITH closed AS (
	UPDATE hypotheses
	SET status = $4, surprise_magnitude = $5::float8, confidence_delta = $6::float8,
	    model_update = $7, actual_outcome = $8, tested_at = now()
	WHERE id = $3::int AND domain = $1 AND status = 'pending' AND (source_data->>'for_pass')::int = $2::int
	RETURNING id
), opened AS (
	INSERT INTO hypotheses (domain, claim, prediction, confidence, status, test_type, source_type, source_data)
	SELECT $1, $12, $13, $14::float8, 'pending', 'passive_observation', 'inference', $15::jsonb
	WHERE $11::bool AND NOT EXISTS (
		SELECT 1 FROM hypotheses WHERE domain = $1 AND (source_data->>'pass')::int = $2::int)
	RETURNING id
), tested AS (
	INSERT INTO cognitive_events (event_type, source_layer, target_layer, priority, payload)
	SELECT 'hypothesis_tested', $17, $1, $9::float8, $10::jsonb || jsonb_build_object('hypothesis_id', closed.id)
	FROM closed
	RETURNING id
), formed AS (
	INSERT INTO cognitive_events (event_type, source_layer, target_layer, payload)
	SELECT 'hypothesis_formed', $17, $1, $16::jsonb || jsonb_build_object('hypothesis_id', opened.id)
	FROM opened
	RETURNING id
)
SELECT (SELECT id FROM closed), (SELECT id FROM opened), (SELECT count(*) FROM tested), (SELECT count(*) FROM formed)`

// pending is the forecast recordPass may close.
type pending struct {
	id         int64
	forecast   float64
	confidence float64
}

// closing is the scored close of a pending forecast.
type closing struct {
	pending
	actual      float64
	status      string
	surprise    float64
	delta       float64
	modelUpdate string
}

// score scores a forecast against the churn the pass actually had, moving
// confidence the way OCA's own hypothesis engine does.
func score(p pending, actual float64) closing {
	c := closing{pending: p, actual: actual, surprise: math.Abs(p.forecast - actual)}
	if c.surprise <= confirmTolerance {
		c.status = "confirmed"
		c.delta = min(0.2, (1-p.confidence)*0.3)
	} else {
		c.status = "refuted"
		c.delta = -min(0.3, p.confidence*0.4)
	}
	c.modelUpdate = fmt.Sprintf("decay=%s forecast=%s actual=%s surprise=%s", num(decay), num(p.forecast), num(actual), num(c.surprise))
	return c
}

func clamp01(v float64) float64 { return min(1, max(0, v)) }

// RecordPass writes the pass's ponder_pass episode and runs the hypothesis
// lifecycle in the same transaction. The episode is written whatever the
// lifecycle decides; only the hypothesis half can decline.
func (s *Store) RecordPass(ctx context.Context, r oca.PassRecord) (oca.PassResult, error) {
	if err := checkSession(r.Session); err != nil {
		return oca.PassResult{}, err
	}
	if r.Pass < 1 {
		return oca.PassResult{}, fmt.Errorf("pass %d is not a pass number", r.Pass)
	}
	outcome, err := passOutcome(r.Metrics)
	if err != nil {
		return oca.PassResult{}, fmt.Errorf("encoding pass %d metrics: %w", r.Pass, err)
	}
	prediction, err := passPrediction(r.Predict)
	if err != nil {
		return oca.PassResult{}, fmt.Errorf("encoding pass %d forecast: %w", r.Pass, err)
	}
	surprise := r.Metrics.Surprise
	if r.Pass == 1 {
		surprise = nil // pass 1 measures no surprise, whatever the caller sent
	}
	domain := r.Session.Domain()

	var res oca.PassResult
	err = pgx.BeginFunc(ctx, s.conn, func(tx pgx.Tx) error {
		var rd passReads
		b := &pgx.Batch{}
		b.Queue(insertPassEpisodeSQL, epPass, sessionContent(r.Session, r.Pass), prediction, outcome, surprise).
			QueryRow(func(row pgx.Row) error { return row.Scan(&res.EpisodeID) })
		b.Queue(tryLockSQL, domain).QueryRow(func(row pgx.Row) error { return row.Scan(&rd.held) })
		b.Queue(pendingSQL, domain, r.Pass).QueryRow(func(row pgx.Row) error {
			var p pending
			err := row.Scan(&p.id, &p.forecast, &p.confidence)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			rd.pend = &p
			return err
		})
		b.Queue(previousSQL, domain, r.Pass).QueryRow(func(row pgx.Row) error {
			err := row.Scan(&rd.prevConf, &rd.prevDelta)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			rd.hasPrevious = true
			return err
		})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return err
		}

		if !rd.held {
			res.Lock, res.CloseNote, res.OpenNote = Contended, Contended, Contended
			res.ForecastChurn = forecastFor(r)
			return nil
		}
		return rd.lifecycle(ctx, tx, r, domain, &res)
	})
	if err != nil {
		return oca.PassResult{}, err
	}
	return res, nil
}

// passReads are what a pass's batch read before the lifecycle: whether
// the session's lock was taken, the forecast pending for the pass, and the
// previous pass's confidence and its change.
type passReads struct {
	held                bool
	pend                *pending
	prevConf, prevDelta *float64
	hasPrevious         bool
}

// lifecycle closes the pending forecast with the pass's churn and opens
// the next one, in tx, under the lock the batch took, writing what it did
// into res.
func (rd passReads) lifecycle(ctx context.Context, tx pgx.Tx, r oca.PassRecord, domain string, res *oca.PassResult) error {
	res.Lock = LockHeld
	churn := r.Metrics.Churn

	var cl *closing
	if rd.pend != nil && churn != nil {
		c := score(*rd.pend, *churn)
		cl = &c
	}
	res.ForecastChurn = forecastFor(r)
	open := res.ForecastChurn != nil
	confidence := firstConfidence
	switch {
	case cl != nil:
		confidence = clamp01(cl.confidence + cl.delta)
	case rd.hasPrevious && rd.prevConf != nil:
		confidence = clamp01(*rd.prevConf + deref(rd.prevDelta))
	}
	if cl == nil && !open {
		res.CloseNote, res.OpenNote = NothingPending, NoChurnSignal
		return nil
	}

	args := lifecycleArgs{domain: domain, pass: r.Pass, slug: r.Session.Slug, close: cl}
	if open {
		args.open, args.forecast, args.churn, args.confidence = true, *res.ForecastChurn, *churn, confidence
	}
	params, err := args.params()
	if err != nil {
		return err
	}
	var closedID, openedID *int64
	var tested, formed int
	if err := tx.QueryRow(ctx, lifecycleSQL, params...).Scan(&closedID, &openedID, &tested, &formed); err != nil {
		return err
	}
	res.CloseNote = NothingPending
	if closedID != nil {
		res.CloseNote = Closed
		res.ClosedHypothesisID = closedID
		res.ClosedStatus = &cl.status
		res.ClosedSurprise = &cl.surprise
	}
	switch {
	case !open:
		res.OpenNote = NoChurnSignal
	case openedID != nil:
		res.OpenNote = Opened
		res.HypothesisID = openedID
	default:
		res.OpenNote = AlreadyForecast
	}
	return nil
}

// forecastFor is 0.6 × churn for a pass that has churn (pass 2 on), never
// clamped: it forecasts an unclamped quantity. Nil on pass 1.
func forecastFor(r oca.PassRecord) *float64 {
	if r.Pass < 2 || r.Metrics.Churn == nil {
		return nil
	}
	f := decay * *r.Metrics.Churn
	return &f
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// lifecycleArgs are lifecycleSQL's values; close nil means nothing to
// close, forecast unset (open false) means nothing to open.
type lifecycleArgs struct {
	domain, slug string
	pass         int
	close        *closing
	open         bool
	forecast     float64
	churn        float64
	confidence   float64
}

func (a lifecycleArgs) params() ([]any, error) {
	p := make([]any, 17)
	p[0], p[1], p[16] = a.domain, a.pass, sourceLayer
	if c := a.close; c != nil {
		tested, err := payload(map[string]any{"slug": a.slug, "pass": a.pass, "status": c.status, "surprise": c.surprise})
		if err != nil {
			return nil, err
		}
		p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9] =
			c.id, c.status, c.surprise, c.delta, c.modelUpdate, num(c.actual), min(1, c.surprise), tested
	} else {
		p[9] = "{}"
	}
	p[10] = a.open
	if a.open {
		next := a.pass + 1
		formed, err := payload(map[string]any{"slug": a.slug, "pass": a.pass, "for_pass": next, "forecastChurn": a.forecast})
		if err != nil {
			return nil, err
		}
		source, err := compactJSON(map[string]any{"pass": a.pass, "for_pass": next, "forecast_churn": a.forecast})
		if err != nil {
			return nil, err
		}
		p[11] = fmt.Sprintf("ponder %s: pass %d churn ≈ %s", a.slug, next, num(a.forecast))
		p[12] = fmt.Sprintf("churn(pass %d) = %s (%s × %s)", next, num(a.forecast), num(decay), num(a.churn))
		p[13], p[14], p[15] = a.confidence, source, formed
	} else {
		p[15] = "{}"
	}
	return p, nil
}
