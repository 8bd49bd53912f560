package ponder

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/laserkit/laserkit/ponder/oca"
)

// StartOptions are start's arguments.
type StartOptions struct {
	Subject string
	Lens    string // "" = none
	Project string // "" = the git top-level directory's name, else Root's
	Passes  int    // pass budget, at least 1 (the CLI's default is DefaultPassBudget)
}

// StartResult is what start reports.
type StartResult struct {
	Slug       string  `json:"slug"`
	Subject    string  `json:"subject"`
	Lens       *string `json:"lens"`
	Project    string  `json:"project"`
	PassBudget int     `json:"passBudget"`
	Status     string  `json:"status"`
	Pass       int     `json:"pass"`
	CreatedAt  string  `json:"createdAt"`
	Dir        string  `json:"dir"`
	// Export is the shell line that makes this session the one of every
	// later ponder command of the shell (PONDER_SLUG): one per agent when
	// several work on one repository.
	Export string   `json:"export"`
	OCA    StartOCA `json:"oca"`
}

// StartOCA is the bridge's part of start.
type StartOCA struct {
	Mode           oca.Mode      `json:"mode"`
	Probe          *oca.Probe    `json:"probe"`
	PriorPondering []oca.Episode `json:"priorPondering"`
	SessionRef     *string       `json:"sessionRef"`
}

// Start creates a session and makes it current.
func (e *Engine) Start(o StartOptions) (*StartResult, error) {
	subject := o.Subject
	if strings.TrimSpace(subject) == "" {
		return nil, usageErr("start needs a subject: ponder start \"<subject>\" [--lens L]")
	}
	if o.Passes < 1 {
		return nil, usageErr("--passes must be at least 1, got %d", o.Passes)
	}
	// Under PONDER_OCA=on a dead OCA refuses before anything is written.
	if err := e.Bridge.Require(); err != nil {
		return nil, ocaErr("%v; no session was created", err)
	}
	res := &StartResult{Subject: subject, PassBudget: o.Passes, Status: StatusActive, Pass: 1}
	res.OCA.Mode = e.Bridge.Mode()
	res.OCA.Probe = e.Bridge.Probe()
	// Prior pondering is asked before this session's own start row exists.
	res.OCA.PriorPondering = e.Bridge.PriorPondering(subject)

	project := o.Project
	if project == "" {
		project = e.defaultProject()
	}
	now := e.now()
	slug, err := e.claimSlug(baseSlug(subject, o.Lens, now.Format("2006-01-02")))
	if err != nil {
		return nil, err
	}
	dir := e.sessionDir(slug)
	s := &Session{
		Slug: slug, Subject: subject, Project: project, PassBudget: o.Passes,
		Mode: modeDeliberate, Status: StatusActive, CreatedAt: e.stamp(),
		CurrentPass: 1, Phase: PhaseReady, ConfidenceFloorValue: DefaultConfidenceFloor,
		History: []PassHistory{{Pass: 1}},
		OCA:     SessionOCA{Deliberations: map[string]int64{}, Hypotheses: map[string]HypothesisNote{}},
	}
	if o.Lens != "" {
		lens := o.Lens
		s.Lens = &lens
	}
	if err := writeSession(dir, s); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := e.setCurrent(slug); err != nil {
		return nil, err
	}
	e.Bridge.Attach(dir)
	h := &handle{e: e, slug: slug, dir: dir, s: s}
	ref := e.Bridge.RecordStart(s.ocaSession())
	h.ocaCall(ref != nil, "recordStart")
	if ref != nil {
		s.OCA.SessionRef = &ref.SessionRef
		if err := h.save(); err != nil {
			return nil, err
		}
	}
	res.Slug, res.Lens, res.Project, res.CreatedAt, res.Dir = slug, s.Lens, project, s.CreatedAt, dir
	res.Export = "export " + SelectedByEnv + "=" + slug
	res.OCA.SessionRef = s.OCA.SessionRef
	return res, h.ocaResult()
}

// defaultProject is the git top-level directory's name, else Root's.
func (e *Engine) defaultProject() string {
	cmd := exec.Command("git", "-C", e.Root, "rev-parse", "--show-toplevel")
	if out, err := cmd.Output(); err == nil {
		if top := strings.TrimSpace(string(out)); top != "" {
			return filepath.Base(top)
		}
	}
	abs, err := filepath.Abs(e.Root)
	if err != nil {
		return filepath.Base(e.Root)
	}
	return filepath.Base(abs)
}
