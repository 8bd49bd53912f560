package pgstore

import (
	"context"
	"slices"

	"github.com/laserkit/laserkit/ponder/oca"
)

// probeSQL lists, for every required table, whether it resolves on the
// search_path and which of its columns exist, plus the labels of the event
// type enum, in one round trip. Names resolve exactly as ponder's
// unqualified statements will resolve them.
const probeSQL = `
SELECT 'table' AS kind, t.name AS name, a.attname AS detail
FROM unnest($1::text[]) AS t(name)
LEFT JOIN pg_attribute a
       ON a.attrelid = to_regclass(t.name) AND a.attnum > 0 AND NOT a.attisdropped
WHERE to_regclass(t.name) IS NOT NULL
UNION ALL
SELECT 'enum', e.enumlabel, NULL
FROM pg_enum e
WHERE e.enumtypid = to_regtype($2)`

// Probe reports which of the five tables, their required columns and the
// five event-type labels are missing. Missing entries read "table",
// "table.column" or "enum:label"; a table that is absent is listed once,
// not column by column.
func (s *Store) Probe(ctx context.Context) (oca.ProbeReport, error) {
	tables := make([]string, len(requiredColumns))
	for i, t := range requiredColumns {
		tables[i] = t.table
	}
	rows, err := s.conn.Query(ctx, probeSQL, tables, eventTypeEnum)
	if err != nil {
		return oca.ProbeReport{}, err
	}
	present := map[string]bool{} // "table", "table.column", "enum:label"
	for rows.Next() {
		var kind, name string
		var detail *string
		if err := rows.Scan(&kind, &name, &detail); err != nil {
			rows.Close()
			return oca.ProbeReport{}, err
		}
		switch kind {
		case "table":
			present[name] = true
			if detail != nil {
				present[name+"."+*detail] = true
			}
		case "enum":
			present["enum:"+name] = true
		}
	}
	if err := rows.Err(); err != nil {
		return oca.ProbeReport{}, err
	}
	missing := missingFrom(present)
	if len(missing) > 0 {
		return oca.ProbeReport{Schema: false, Missing: missing}, nil
	}
	// The schema is whole; can this role write it? A role that may only
	// read would pass every check above and then fail every insert.
	lacking, err := s.missingPrivileges(ctx)
	if err != nil {
		return oca.ProbeReport{}, err
	}
	return oca.ProbeReport{Schema: true, Missing: lacking}, nil
}

// requiredPrivileges are what ponder's statements need of the current
// role, per table: every table takes inserts whose RETURNING reads the new
// id (INSERT and SELECT), the lifecycle and the read-backs read
// (SELECT), forecasts are closed and expired and deliberations resolved in
// place (UPDATE); and each id comes from its sequence (USAGE).
var requiredPrivileges = []struct {
	table string
	privs []string
}{
	{"episodic_memory", []string{"SELECT", "INSERT"}},
	{"hypotheses", []string{"SELECT", "INSERT", "UPDATE"}},
	{"deliberations", []string{"SELECT", "INSERT", "UPDATE"}},
	{"metacognitive_observations", []string{"SELECT", "INSERT"}},
	{"cognitive_events", []string{"SELECT", "INSERT"}},
}

// privilegeSQL answers, for each (table, privilege), whether the current
// role has it, and for each table whether it may use its id's sequence
// (true when the id has none).
const privilegeSQL = `
SELECT x.tbl, x.priv, has_table_privilege(to_regclass(x.tbl), x.priv)
FROM unnest($1::text[], $2::text[]) AS x(tbl, priv)
UNION ALL
SELECT t.tbl, 'USAGE', coalesce(has_sequence_privilege(pg_get_serial_sequence(t.tbl, 'id'), 'USAGE'), true)
FROM unnest($3::text[]) AS t(tbl)`

// missingPrivileges lists what the role lacks: "privilege:INSERT on
// episodic_memory", "privilege:USAGE on the sequence of episodic_memory.id".
func (s *Store) missingPrivileges(ctx context.Context) ([]string, error) {
	var tbls, privs, seqs []string
	for _, r := range requiredPrivileges {
		seqs = append(seqs, r.table)
		for _, p := range r.privs {
			tbls, privs = append(tbls, r.table), append(privs, p)
		}
	}
	rows, err := s.conn.Query(ctx, privilegeSQL, tbls, privs, seqs)
	if err != nil {
		return nil, err
	}
	has := map[string]bool{}
	for rows.Next() {
		var tbl, priv string
		var ok bool
		if err := rows.Scan(&tbl, &priv, &ok); err != nil {
			rows.Close()
			return nil, err
		}
		has[priv+" "+tbl] = ok
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var lacking []string
	for _, r := range requiredPrivileges {
		for _, p := range r.privs {
			if !has[p+" "+r.table] {
				lacking = append(lacking, "privilege:"+p+" on "+r.table)
			}
		}
		if !has["USAGE "+r.table] {
			lacking = append(lacking, "privilege:USAGE on the sequence of "+r.table+".id")
		}
	}
	return lacking, nil
}

// missingFrom lists what the probe did not find, in requiredColumns' order.
func missingFrom(present map[string]bool) []string {
	var missing []string
	for _, t := range requiredColumns {
		if !present[t.table] {
			missing = append(missing, t.table)
			continue
		}
		for _, c := range t.columns {
			if !present[t.table+"."+c] {
				missing = append(missing, t.table+"."+c)
			}
		}
	}
	for _, l := range requiredLabels {
		if !present["enum:"+l] {
			missing = append(missing, "enum:"+l)
		}
	}
	return slices.Clip(missing)
}
