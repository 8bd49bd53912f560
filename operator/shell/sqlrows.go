package shell

import "strings"

// Statements that change every row of a table. DELETE with no WHERE is
// TRUNCATE spelled another way (every row goes, and no client keeps a
// copy); UPDATE with no WHERE overwrites a column in every row. A WHERE
// that names no column (WHERE 1=1, WHERE true, WHERE 'a'='a') selects every
// row too. A WHERE that names a column is left as it is: the gate cannot
// tell how many rows it selects.

// sqlToken is one token of SQL text: a word (keyword or identifier), a
// quoted identifier, a literal (string or number) or one character of
// punctuation, with the depth of parentheses it stands at.
type sqlToken struct {
	text  string
	kind  byte // 'w' word, 'i' quoted identifier, 'l' literal, 'p' punctuation
	depth int
}

// sqlStatements splits SQL text (comments already taken out) into its
// statements' tokens, at the semicolons outside quotes and parentheses.
func sqlStatements(s string) [][]sqlToken {
	var stmts [][]sqlToken
	var cur []sqlToken
	depth := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := byte(c)
			if c == '[' {
				end = ']'
			}
			j := i + 1
			for j < len(s) {
				if s[j] == end {
					if j+1 < len(s) && s[j+1] == end && end != ']' {
						j += 2 // '' inside a string
						continue
					}
					break
				}
				j++
			}
			kind := byte('i')
			if c == '\'' {
				kind = 'l'
			}
			cur = append(cur, sqlToken{text: s[i:min(j+1, len(s))], kind: kind, depth: depth})
			i = j + 1
		case isSQLWordByte(c):
			j := i
			for j < len(s) && isSQLWordByte(s[j]) {
				j++
			}
			kind := byte('w')
			if c >= '0' && c <= '9' {
				kind = 'l'
			}
			cur = append(cur, sqlToken{text: s[i:j], kind: kind, depth: depth})
			i = j
		case c == ';' && depth == 0:
			if len(cur) > 0 {
				stmts = append(stmts, cur)
			}
			cur = nil
			i++
		default:
			if c == ')' && depth > 0 {
				depth--
			}
			cur = append(cur, sqlToken{text: string(c), kind: 'p', depth: depth})
			if c == '(' {
				depth++
			}
			i++
		}
	}
	if len(cur) > 0 {
		stmts = append(stmts, cur)
	}
	return stmts
}

func isSQLWordByte(c byte) bool {
	return c == '_' || c == '$' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// sqlConstantWords are the words a condition can hold without naming a
// column.
var sqlConstantWords = []string{"and", "or", "not", "true", "false", "null", "is", "in", "like", "between", "unknown"}

// sqlEveryRow says which statements of SQL text change every row of a
// table: "DELETE" or "UPDATE" for each one (a WITH before it included).
func sqlEveryRow(text string) []string {
	var out []string
	for _, st := range sqlStatements(text) {
		verb := sqlVerb(st)
		if verb == "" {
			continue
		}
		where := -1
		for i, t := range st {
			if t.depth == 0 && t.kind == 'w' && strings.EqualFold(t.text, "where") {
				where = i
				break
			}
		}
		if where < 0 || sqlConstant(st[where+1:]) {
			out = append(out, verb)
		}
	}
	return out
}

// sqlVerb is DELETE or UPDATE when the statement is one (after a WITH
// clause), else "".
func sqlVerb(st []sqlToken) string {
	i := 0
	if i < len(st) && st[i].kind == 'w' && strings.EqualFold(st[i].text, "with") {
		// WITH [RECURSIVE] name [(cols)] AS [NOT] [MATERIALIZED] (…), …:
		// the statement's verb is the first word at depth 0 after a
		// parenthesised query that no comma follows.
		for i++; i < len(st); i++ {
			if st[i].depth == 0 && st[i].kind == 'p' && st[i].text == ")" {
				if i+1 < len(st) && !(st[i+1].kind == 'p' && st[i+1].text == ",") && st[i+1].kind == 'w' &&
					!strings.EqualFold(st[i+1].text, "as") {
					i++
					break
				}
			}
		}
	}
	if i >= len(st) || st[i].kind != 'w' {
		return ""
	}
	switch strings.ToLower(st[i].text) {
	case "delete":
		return "DELETE"
	case "update":
		return "UPDATE"
	}
	return ""
}

// sqlConstant: a WHERE condition (up to what ends it at depth 0) that
// names no column and calls no function: literals, operators and the
// words of logic only.
func sqlConstant(cond []sqlToken) bool {
	for _, t := range cond {
		if t.depth == 0 && t.kind == 'w' {
			switch strings.ToLower(t.text) {
			case "returning", "order", "limit", "option", "output":
				return true
			}
		}
		switch t.kind {
		case 'i':
			return false
		case 'w':
			found := false
			for _, k := range sqlConstantWords {
				if strings.EqualFold(t.text, k) {
					found = true
				}
			}
			if !found {
				return false
			}
		}
	}
	return true
}

// stripSQLComments replaces -- and /* */ comments with a blank, outside
// string literals.
func stripSQLComments(s string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			b.WriteByte(c)
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
			b.WriteByte(c)
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte(' ')
			if i < len(s) {
				b.WriteByte('\n')
			}
		case c == '#' && (i == 0 || s[i-1] == '\n' || s[i-1] == ' '):
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte(' ')
			if i < len(s) {
				b.WriteByte('\n')
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				i = len(s)
			} else {
				i += end + 3
			}
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
