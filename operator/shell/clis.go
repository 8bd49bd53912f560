package shell

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// Publishers, deployers and other command-line tools with subcommands
// (npm, cargo, docker, kubectl, helm, terraform, gh, vercel, …), read the
// way each one reads its command line: global options before the
// subcommand (with their values), the subcommand's aliases and
// abbreviations, +toolchain, wrapper subcommands (pnpm recursive,
// terragrunt run-all). The canonical words ("npm publish …") then meet the
// grammar patterns and the pack. A help request (--help, -h where the tool
// reads it so, a help subcommand) and a dry run as the tool parses it
// (npm's --dry-run false is no dry run) change nothing: their findings are
// dry runs.

// cliModel reads a tool with subcommands: each reading's canonical words
// meet the grammar and the pack (as a dry run when nothing happens), and
// the structural rules the patterns cannot express.
func (a *analyzer) cliModel(c *cmdCall) bool {
	spec, tool := cliSpecOf(c.name)
	if tool == "bun" && !slices.ContainsFunc(c.args, func(w arg) bool { return w.known && (w.val == "publish" || w.val == "pm") }) {
		return a.interpreterModel(c)
	}
	explained := true
	for _, r := range readCLI(spec, c.args) {
		sub := strings.Join(r.subs, " ")
		switch {
		case tool == "docker" && (sub == "exec" || sub == "container exec"):
			a.containerExec(c, r.rest)
			continue
		case tool == "kubectl" && sub == "exec":
			for i, w := range r.rest {
				if w.known && w.val == "--" {
					a.walk.command(r.rest[i+1:], c.d, c.io, nil)
				}
			}
			continue
		case runnerSub(tool, r.subs):
			// A package runner behind global options or a wrapper
			// subcommand (pnpm -r exec, npm -w a exec, uv --directory x
			// run): the words after it are a command that runs.
			a.walk.command(skipOptions(r.rest, optSpec{short: "pc", long: []string{"package", "call", "with", "from", "python", "env", "directory", "project"}}), c.d, c.io, nil)
			continue
		case tool == "docker" && (sub == "run" || sub == "create" || sub == "container run" || sub == "container create" || sub == "compose run" || sub == "compose exec"),
			tool == "kubectl" && (sub == "run" || sub == "debug"):
			// The command runs inside a container: what it does there is
			// not ours to read.
			explained = false
			continue
		}
		words := append([]arg{}, argsOf(r.subs)...)
		where, note := Executed, ""
		if r.inert != "" {
			where, note = DryRun, "a "+r.inert+": changes nothing"
			words = append(words, r.rest...)
		} else {
			// No dry run as the tool reads it: a dry-run option it reads
			// as "no" is left out, so the patterns see the real command
			// (wrangler deploy --dry-run=false deploys).
			words = append(words, withoutDryRun(spec, r.rest)...)
		}
		text := commandText(tool, words)
		a.grammarAs(text, where, note, text)
		a.packAs(tool, text, where, note, text)
		a.cliRules(tool, r, where, note, text)
		if r.inert == "" && (tool == "npm" || tool == "pnpm" || tool == "yarn") {
			a.packageScripts(tool, r.subs, r.rest, c.d)
		}
		if path, ok := cliDestroys(spec, r); ok {
			a.add(Finding{Label: "parsed: " + tool + " " + path + " (deletes hosted resources or their data)", Outward: true, Where: where, Note: note, Command: text})
		}
	}
	return explained
}

// cliDestroys: the command path of a reading — its subcommand, then the
// first operands after it, option values aside — names one of the tool's
// delete verbs; path is that path up to the verb.
func cliDestroys(s *cliSpec, r cliRead) (path string, ok bool) {
	words := slices.Clone(r.subs)
	for i := 0; i < len(r.rest) && len(words) < 4; i++ {
		w := r.rest[i]
		name, _, glued := strings.Cut(w.val, "=")
		switch {
		case !w.known:
			words = append(words, "?")
		case w.val == "--":
			i = len(r.rest)
		case strings.HasPrefix(w.val, "-"):
			if !glued && slices.Contains(s.values, name) {
				i++
			}
		default:
			words = append(words, w.val)
		}
	}
	for i, w := range words {
		for _, part := range strings.Split(w, ":") {
			if destroyVerb(s.destroys, part) {
				return strings.Join(words[:i+1], " "), true
			}
		}
	}
	return "", false
}

// destroyVerb: word is one of verbs (a verb ending in "*" is a prefix).
func destroyVerb(verbs []string, word string) bool {
	for _, v := range verbs {
		if p, prefix := strings.CutSuffix(v, "*"); prefix && strings.HasPrefix(word, p) || v == word {
			return true
		}
	}
	return false
}

// withoutDryRun are a reading's words without the dry-run options the
// tool reads as no dry run (and the true/false after one, for a tool that
// takes it there).
func withoutDryRun(s *cliSpec, rest []arg) []arg {
	if s.dry == nil {
		return rest
	}
	out := make([]arg, 0, len(rest))
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		name, _, _ := strings.Cut(w.val, "=")
		base, negated := strings.CutPrefix(name, "--no-")
		if _, dry := s.dry[name]; w.known && (dry || negated && s.dry["--"+base] != nil) {
			if s.nopt && i+1 < len(rest) && (rest[i+1].val == "true" || rest[i+1].val == "false") {
				i++
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// cliRules are the publishes and deletes the patterns cannot see from the
// words alone.
func (a *analyzer) cliRules(tool string, r cliRead, where Where, note, text string) {
	sub := strings.Join(r.subs, " ")
	has := func(names ...string) (string, bool) {
		for i, w := range r.rest {
			if !w.known {
				continue
			}
			name, val, glued := strings.Cut(w.val, "=")
			if slices.Contains(names, name) {
				if !glued && i+1 < len(r.rest) {
					val = r.rest[i+1].val
				}
				return val, true
			}
		}
		return "", false
	}
	add := func(label string, outward bool) {
		a.add(Finding{Label: "parsed: " + label, Outward: outward, Where: where, Note: note, Command: text})
	}
	switch tool {
	case "docker":
		if sub == "build" || sub == "bake" {
			out, _ := has("--output", "-o")
			if _, push := has("--push"); push || strings.Contains(out, "type=registry") || strings.Contains(out, "push=true") {
				add("docker build --push (publishes an image)", true)
			}
		}
		if sub == "imagetools" && len(r.rest) > 0 && r.rest[0].val == "create" {
			add("docker push (publishes an image)", true)
		}
	case "gh":
		if sub == "api" {
			if m, ok := has("-X", "--method"); ok && strings.EqualFold(m, "DELETE") {
				add("gh api -X DELETE (deletes a resource)", true)
			}
			for _, w := range r.rest {
				if w.known && strings.HasPrefix(w.val, "-X") && strings.EqualFold(w.val[2:], "DELETE") {
					add("gh api -X DELETE (deletes a resource)", true)
				}
			}
		}
	case "vercel":
		if t, ok := has("--target"); ok && strings.EqualFold(t, "production") {
			add("vercel --target=production (production deploy)", true)
		}
		if sub == "promote" || sub == "rollback" {
			add("vercel "+sub+" (changes the production deployment)", true)
		}
	case "netlify":
		if _, ok := has("--prodIfUnlocked"); ok && sub == "deploy" {
			add("netlify deploy --prod (production deploy)", true)
		}
	case "hatch":
		if sub == "publish" {
			add("hatch publish (package registry upload)", true)
		}
	case "cargo":
		if sub == "yank" {
			add("cargo yank (withdraws a published crate version)", true)
		}
	}
}

// containerExec follows docker exec into the command it runs inside the
// container.
func (a *analyzer) containerExec(c *cmdCall, rest []arg) {
	sub := skipOptions(rest, optSpec{short: "euw", long: []string{"env", "env-file", "user", "workdir", "detach-keys"}})
	if len(sub) > 1 {
		a.walk.command(sub[1:], c.d, c.io, nil)
	}
}

// The database clients (programOf lists them) read SQL from
// -c/-e/--command/--execute, from an argument after the database (sqlite3,
// duckdb), and from their input.

// sqlModel reads the SQL a database client runs, with its comments taken
// out (DROP/**/TABLE is DROP TABLE), and the shell commands its
// meta-commands run (psql's \!, sqlite3's .shell and .system).
func (a *analyzer) sqlModel(c *cmdCall) bool {
	var sql []string
	positional := 0
	built := ""
	for i := 0; i < len(c.args); i++ {
		w := c.args[i]
		v := w.val
		switch {
		case !w.known:
			switch {
			case i > 0 && sqlOption(c.args[i-1].val):
				built = firstOf(built, v)
			case c.name == "sqlite3" || c.name == "sqlite" || c.name == "duckdb":
				if positional++; positional >= 2 {
					built = firstOf(built, v)
				}
			}
		case v == "-c" || v == "-e" || v == "--command" || v == "--execute" || v == "-Q" || v == "-q" || v == "--eval" || v == "--query":
			if i+1 < len(c.args) {
				i++
				sql = append(sql, c.args[i].val)
			}
		case strings.HasPrefix(v, "--command=") || strings.HasPrefix(v, "--execute=") || strings.HasPrefix(v, "--eval="):
			_, s, _ := strings.Cut(v, "=")
			sql = append(sql, s)
		case (v == "-f" || v == "--file" || v == "-i") && i+1 < len(c.args):
			i++
			sql = append(sql, a.readText(c.args[i]))
		case strings.HasPrefix(v, "-"):
			// psql -h HOST, mysql -u USER, …: a value may follow; a word
			// read as a value here is also read as SQL below.
			if len(v) == 2 && i+1 < len(c.args) && !strings.HasPrefix(c.args[i+1].val, "-") && c.name != "sqlite3" && c.name != "duckdb" {
				i++
			}
		default:
			positional++
			if (c.name == "sqlite3" || c.name == "sqlite" || c.name == "duckdb") && positional >= 2 {
				sql = append(sql, v)
			}
		}
	}
	switch c.io.in.kind {
	case literalInput:
		sql = append(sql, c.io.in.text)
	case fileInput:
		// sqlite3 db < wipe.sql runs the file's SQL.
		sql = append(sql, a.readText(arg{val: c.io.in.text, known: true}))
	case unknownInput:
		if decoderRe.Get().MatchString(c.io.in.src) {
			built = firstOf(built, c.io.in.src)
		}
	}
	for _, s := range sql {
		a.sql(c.name, s, c.d)
	}
	if built != "" {
		a.unknown(c.name+" runs SQL built at run time", "from "+firstLine(built)+": the gate cannot read what it runs")
	}
	return true
}

// sqlOption: a database client's option whose value is SQL.
func sqlOption(v string) bool {
	switch v {
	case "-c", "-e", "--command", "--execute", "-Q", "-q", "--eval", "--query":
		return true
	}
	return false
}

// decoderRe: a command that turns text into other text the gate does not
// see (decoding, decompressing, reversing, a program's output).
var decoderRe = firstuse.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`\b(base64|base32|basenc|xxd|od|openssl|uudecode|rev|tr|gunzip|zcat|gzip|bzip2|bzcat|xz|xzcat|zstd|python3?|perl|node|ruby|php|awk|sed)\b`)
}}

// sqlIncludes are the meta-commands that run the SQL of a file: sqlite3's
// .read, psql's \i and \ir, mysql's source and \. .
var sqlIncludes = []string{".read ", `\i `, `\ir `, `\include `, `\include_relative `, "source ", `\. `}

// sql scans SQL text: its meta-commands that run a shell, then the text
// without comments as code.
func (a *analyzer) sql(client, text string, d int) {
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		for _, meta := range []string{`\!`, ".shell", ".system", "system "} {
			if rest, ok := strings.CutPrefix(t, meta); ok && (meta != "system " || client == "mysql" || client == "mariadb") {
				a.subshell(func() { a.walk.script(rest, d+1) })
			}
		}
		for _, meta := range sqlIncludes {
			if file, ok := strings.CutPrefix(t, meta); ok {
				file = strings.Trim(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(file), ";")), `'"`)
				if d >= MaxDepth {
					a.unknown(fmt.Sprintf("nesting deeper than %d levels", MaxDepth), "SQL files inside SQL files are not followed further")
					continue
				}
				a.sql(client, a.readText(arg{val: file, known: true}), d+1)
			}
		}
	}
	stripped := stripSQLComments(text)
	// SQL given to a client is what it runs: its DROP is executed.
	command := commandText(client, []arg{{val: text, known: true}})
	a.packOn(client, client+" "+strings.Join(strings.Fields(stripped), " "), Executed, command)
	for _, verb := range sqlEveryRow(stripped) {
		label := "parsed: DELETE without WHERE through a database client (deletes every row, like TRUNCATE)"
		if verb == "UPDATE" {
			label = "parsed: UPDATE without WHERE through a database client (overwrites every row)"
		}
		a.add(Finding{Label: label, Where: Executed, Command: command})
	}
	a.code(client, stripped, d)
}

// redisModel reads redis-cli: its command (after the connection options)
// and the Lua scripts EVAL runs: FLUSHALL and FLUSHDB delete every key.
func (a *analyzer) redisModel(c *cmdCall) bool {
	var words []arg
	for i := 0; i < len(c.args); i++ {
		w := c.args[i]
		switch {
		case !w.known:
			words = append(words, w)
		case slices.Contains([]string{"-h", "-p", "-s", "-a", "-u", "-n", "-r", "-i", "-d", "--user", "--pass", "--askpass", "-D", "--cacert", "--cert", "--key", "--pattern", "--count"}, w.val):
			i++
		case w.val == "--eval":
			if i+1 < len(c.args) {
				i++
				a.redisScript(a.readText(c.args[i]), commandText("redis-cli", c.args))
			}
		case strings.HasPrefix(w.val, "-"):
		default:
			words = append(words, w)
		}
	}
	text := commandText("redis-cli", c.args)
	if c.io.in.kind == literalInput {
		a.redisScript(c.io.in.text, text)
	}
	if len(words) == 0 {
		return true
	}
	cmd := strings.ToLower(words[0].val)
	switch cmd {
	case "flushall", "flushdb":
		a.add(Finding{Label: "parsed: redis FLUSHALL/FLUSHDB (deletes every key)", Where: Executed, Command: text})
	case "eval", "eval_ro", "function", "fcall", "script":
		for _, w := range words[1:] {
			a.redisScript(w.val, text)
		}
	}
	if !words[0].known {
		a.unknown("redis-cli command known only at run time", "")
	}
	return true
}

func (a *analyzer) redisScript(s, text string) {
	l := strings.ToLower(s)
	if strings.Contains(l, "flushall") || strings.Contains(l, "flushdb") {
		a.add(Finding{Label: "parsed: redis FLUSHALL/FLUSHDB (deletes every key)", Where: Executed, Command: text})
	}
}
