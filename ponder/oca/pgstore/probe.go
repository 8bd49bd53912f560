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
	return oca.ProbeReport{Schema: len(missing) == 0, Missing: missing}, nil
}

// missingFrom lists what the probe did not find, in the spec's table order.
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
