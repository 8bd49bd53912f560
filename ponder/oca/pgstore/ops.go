package pgstore

import (
	"context"
	"errors"

	"github.com/laserkit/laserkit/ponder/oca"
)

var errNotYet = errors.New("pgstore: not implemented yet")

func (s *Store) PriorPondering(ctx context.Context, subject string) ([]oca.Episode, error) {
	return nil, errNotYet
}
func (s *Store) RecordStart(ctx context.Context, se oca.Session) (oca.StartResult, error) {
	return oca.StartResult{}, errNotYet
}
func (s *Store) RecordPass(ctx context.Context, r oca.PassRecord) (oca.PassResult, error) {
	return oca.PassResult{}, errNotYet
}
func (s *Store) RecordDeliberation(ctx context.Context, r oca.DeliberationRecord) (oca.DeliberationResult, error) {
	return oca.DeliberationResult{}, errNotYet
}
func (s *Store) ResolveDeliberation(ctx context.Context, se oca.Session, id int64, summary string) (oca.ResolveResult, error) {
	return oca.ResolveResult{}, errNotYet
}
func (s *Store) RecordObservation(ctx context.Context, r oca.ObservationRecord) (oca.ObservationResult, error) {
	return oca.ObservationResult{}, errNotYet
}
func (s *Store) RecordConverged(ctx context.Context, r oca.ConvergedRecord) (oca.ConvergedResult, error) {
	return oca.ConvergedResult{}, errNotYet
}
func (s *Store) RecordApply(ctx context.Context, r oca.ApplyRecord) (oca.ApplyResult, error) {
	return oca.ApplyResult{}, errNotYet
}
func (s *Store) OpenObservations(ctx context.Context, se oca.Session) ([]oca.Observation, error) {
	return nil, errNotYet
}
