package shell

import (
	"slices"
	"strings"
	"sync"
)

// The command lines of the publishers and deployers (clis.go reads them
// with these specs): global options, subcommands and their aliases, help
// flags and dry runs, each as the tool itself reads them.

type cliSpec struct {
	// values are options that take a value (spaced or glued with =; a
	// short one may be glued on).
	values []string
	// bools are options known to take no value.
	bools []string
	// unknownValue: an option the table does not know may take the next
	// word as its value, so that word is read both ways.
	unknownValue bool
	// nopt: a boolean option may take a following true or false (npm).
	nopt bool
	// plus: a leading +toolchain word (cargo, rustup's proxy).
	plus bool
	// aliases of subcommands; abbrev lists every subcommand and alias a
	// unique prefix of which names it (npm's abbrev).
	aliases map[string]string
	abbrev  []string
	// wraps are subcommand words that run another subcommand, with how
	// many words of their own they take (pnpm recursive, yarn workspace
	// NAME, terragrunt run-all).
	wraps map[string]int
	// helpShort: -h is help; helpDash: -help is (Go's flag package).
	helpShort, helpDash bool
	// dry are the dry-run options: name → values meaning no dry run.
	dry map[string][]string
	// destroys are the command words that delete hosted resources or
	// their data, as the tool's documentation spells them: a word, or a
	// prefix ending in "*" (aws delete-*); a colon-joined command
	// (heroku apps:destroy) is read part by part.
	destroys []string
}

const npmCommandList = (`access adduser approve-scripts audit bugs cache ci completion config dedupe deny-scripts deprecate
	diff dist-tag docs doctor edit exec explain explore find-dupes fund get help help-search init install install-ci-test
	install-scripts install-test link ll login logout ls org outdated owner pack ping pkg prefix profile prune publish query
	rebuild repo restart root run sbom search set shrinkwrap stage star stars start stop team test token trust undeprecate
	uninstall unpublish unstar update version view whoami`)

// npmAliases are npm 11's command aliases (lib/utils/cmd-list.js).
func npmAliases() map[string]string {
	return map[string]string{
		"author": "owner", "home": "docs", "issues": "bugs", "info": "view", "show": "view", "find": "search", "add": "install",
		"unlink": "uninstall", "remove": "uninstall", "rm": "uninstall", "r": "uninstall", "un": "uninstall", "rb": "rebuild",
		"list": "ls", "ln": "link", "create": "init", "i": "install", "it": "install-test", "cit": "install-ci-test", "u": "update",
		"up": "update", "c": "config", "s": "search", "se": "search", "tst": "test", "t": "test", "ddp": "dedupe", "v": "view",
		"run-script": "run", "clean-install": "ci", "clean-install-test": "install-ci-test", "x": "exec", "why": "explain",
		"la": "ll", "verison": "version", "ic": "ci", "innit": "init", "in": "install", "ins": "install", "inst": "install",
		"insta": "install", "instal": "install", "isnt": "install", "isnta": "install", "isntal": "install", "isntall": "install",
		"install-clean": "ci", "isntall-clean": "ci", "hlep": "help", "dist-tags": "dist-tag", "upgrade": "update",
		"udpate": "update", "rum": "run", "sit": "install-ci-test", "urn": "run", "ogr": "org", "add-user": "adduser",
	}
}

// newCLISpec builds the table of a tool (nil: not modelled). A switch,
// not a map of builders: a map is built at package init, in every hook
// process; an entry is built when a command first names its tool
// (builtSpecs keeps it), so a process pays only for the tools its command
// names.
func newCLISpec(name string) *cliSpec {
	switch name {
	case "npm":
		aliases := npmAliases()
		npmCommands := strings.Fields(npmCommandList)
		return &cliSpec{values: []string{"--registry", "--userconfig", "--globalconfig", "--prefix", "-C", "--cache", "--loglevel", "--workspace", "-w",
			"--tag", "--otp", "--access", "--scope", "--auth-type", "--cafile", "--proxy", "--https-proxy", "--before", "--include", "--omit"},
			bools:        []string{"-g", "--global", "-ws", "--workspaces", "--json", "-d", "-dd", "--silent", "-s", "-q", "--quiet", "-f", "--force", "-y", "--yes"},
			unknownValue: true, nopt: true, aliases: aliases, abbrev: append(slices.Clone(npmCommands), keys(aliases)...),
			helpShort: true, dry: map[string][]string{"--dry-run": {"false"}}}
	case "pnpm":
		return &cliSpec{values: []string{"--filter", "-F", "--dir", "-C", "--workspace-dir", "--reporter", "--loglevel", "--registry", "--tag", "--otp", "--access"},
			bools: []string{"-r", "--recursive", "-w", "--workspace-root", "--silent", "-s"}, unknownValue: true, nopt: true,
			aliases: map[string]string{"pub": "publish"}, wraps: map[string]int{"recursive": 0, "m": 0, "multi": 0},
			helpShort: true, dry: map[string][]string{"--dry-run": {"false"}}}
	case "yarn":
		return &cliSpec{values: []string{"--cwd", "--registry", "--tag", "--otp", "--access"}, unknownValue: true,
			wraps: map[string]int{"workspace": 1, "npm": 0}, helpShort: true, dry: map[string][]string{"--dry-run": {"false"}}}
	case "bun":
		return &cliSpec{values: []string{"--cwd", "--registry", "--tag", "--otp", "--access", "--config", "-c"}, helpShort: true, dry: map[string][]string{"--dry-run": {"false"}},
			wraps: map[string]int{"pm": 0}}
	case "cargo":
		return &cliSpec{values: []string{"--config", "-Z", "--color", "-C", "--manifest-path", "--registry", "--index", "--token", "-p", "--package", "--target", "--features", "-F", "-j", "--jobs"},
			bools: []string{"--locked", "--offline", "--frozen", "-v", "-vv", "--verbose", "-q", "--quiet", "--no-verify", "--allow-dirty", "--all-features"},
			plus:  true, aliases: map[string]string{"b": "build", "c": "check", "d": "doc", "r": "run", "t": "test", "rm": "remove"},
			helpShort: true, dry: map[string][]string{"--dry-run": nil, "-n": nil}}
	case "docker":
		return &cliSpec{values: []string{"--context", "-c", "--host", "-H", "--config", "--log-level", "-l", "--tlscacert", "--tlscert", "--tlskey",
			"--platform", "--tag", "-t", "--file", "-f", "--output", "-o", "--builder", "--build-arg", "--target", "--progress", "--cache-from", "--cache-to", "--label"},
			bools:   []string{"-D", "--debug", "--tls", "--tlsverify", "--push", "--load", "-q", "--quiet", "--all-tags", "-a", "--pull", "--no-cache"},
			aliases: map[string]string{"b": "build"}, wraps: map[string]int{"image": 0, "container": 0, "compose": 0, "manifest": 0, "buildx": 0},
			helpShort: true}
	case "kubectl":
		return &cliSpec{values: []string{"--context", "--namespace", "-n", "--kubeconfig", "--cluster", "--user", "-s", "--server", "--token", "--as",
			"--as-group", "--request-timeout", "-v", "-l", "--selector", "-f", "--filename", "-o", "--output", "--field-selector", "--grace-period", "--timeout"},
			bools:     []string{"--all", "-A", "--all-namespaces", "--force", "--wait", "--now", "-R", "--recursive", "--ignore-not-found"},
			helpShort: true, dry: map[string][]string{"--dry-run": {"none", "false"}}}
	case "helm":
		return &cliSpec{values: []string{"--kube-context", "--namespace", "-n", "--kubeconfig", "--registry-config", "--repository-config", "--repository-cache",
			"--burst-limit", "--qps", "--timeout", "--description", "--cascade"},
			bools:     []string{"--wait", "--keep-history", "--no-hooks", "--debug", "--ignore-not-found"},
			aliases:   map[string]string{"un": "uninstall", "del": "uninstall", "delete": "uninstall", "uninstal": "uninstall"},
			helpShort: true, dry: map[string][]string{"--dry-run": {"none", "false"}}}
	case "terraform":
		return &cliSpec{values: []string{"-chdir", "-var", "-var-file", "-target", "-state", "-lock-timeout", "-parallelism"}, helpShort: true, helpDash: true}
	case "terragrunt":
		return &cliSpec{values: []string{"--terragrunt-working-dir", "--working-dir", "--terragrunt-config", "--config", "--terragrunt-log-level", "--log-level",
			"--terragrunt-source", "--source", "--terragrunt-iam-role", "--iam-assume-role"},
			bools:   []string{"--all", "-a", "--terragrunt-non-interactive", "--non-interactive"},
			aliases: map[string]string{"destroy-all": "destroy", "apply-all": "apply"}, wraps: map[string]int{"run-all": 0, "run": 0},
			helpShort: true, helpDash: true}
	case "gh":
		return &cliSpec{values: []string{"-R", "--repo", "-X", "--method", "-H", "--header", "-f", "--raw-field", "-F", "--field", "--hostname", "--jq", "-q", "--template", "-t", "--input"},
			bools: []string{"--paginate", "-i", "--include", "--silent", "--verbose", "--yes", "-y", "--confirm"}, helpShort: true}
	case "vercel":
		return &cliSpec{values: []string{"--token", "-t", "--scope", "-S", "--cwd", "--local-config", "-A", "--global-config", "-Q", "--target", "--env", "-e", "--build-env", "-b", "--meta", "-m", "--regions", "--team", "-T"},
			bools: []string{"--prod", "--yes", "-y", "--force", "-f", "--public", "-p", "--debug", "-d", "--prebuilt", "--no-wait"}, helpShort: true,
			destroys: []string{"remove", "rm"}}
	case "netlify":
		return &cliSpec{values: []string{"--dir", "-d", "--site", "-s", "--auth", "--alias", "--message", "-m", "--functions", "-f", "--filter"},
			bools: []string{"--prod", "-p", "--prodIfUnlocked", "--json", "--open", "-o", "--build"}, helpShort: true,
			destroys: []string{"delete"}}
	case "wrangler":
		return &cliSpec{values: []string{"--config", "-c", "--env", "-e", "--cwd", "--name", "--compatibility-date", "--var", "--define"},
			aliases: map[string]string{"publish": "deploy"}, wraps: map[string]int{"versions": 0}, helpShort: true, dry: map[string][]string{"--dry-run": {"false"}},
			destroys: []string{"delete"}}
	case "fly":
		return &cliSpec{values: []string{"--app", "-a", "--config", "-c", "--access-token", "-t", "--org", "-o", "--image", "-i", "--region", "-r"}, helpShort: true,
			destroys: []string{"destroy", "delete", "remove", "rm"}}
	case "twine":
		return &cliSpec{values: []string{"--repository", "-r", "--repository-url", "--username", "-u", "--password", "-p", "--config-file", "--comment", "-c", "--cert", "--client-cert", "--sign-with", "--identity", "-i"},
			helpShort: true}
	case "uv":
		return &cliSpec{values: []string{"--directory", "--project", "--config-file", "--cache-dir", "--color", "--index", "--index-url", "--publish-url", "--token", "--username", "--password", "--python", "-p"},
			bools:     []string{"--no-cache", "-n", "--offline", "-q", "--quiet", "-v", "--verbose", "--native-tls", "--no-progress"},
			helpShort: true, dry: map[string][]string{"--dry-run": nil}}
	case "poetry":
		return &cliSpec{values: []string{"--directory", "-C", "--project", "-P", "--repository", "-r", "--username", "-u", "--password", "-p", "--cert", "--client-cert", "--dist-dir"},
			bools:     []string{"--build", "-n", "--no-interaction", "-q", "-v", "--skip-existing", "--no-ansi", "--ansi"},
			helpShort: true, dry: map[string][]string{"--dry-run": nil}}
	case "flit":
		return &cliSpec{values: []string{"--repository", "--pypirc", "--format"}, helpShort: true}
	case "hatch":
		return &cliSpec{values: []string{"--env", "-e", "--project", "-p", "--data-dir", "--cache-dir", "--config", "--repo", "-r", "--user", "-u", "--auth", "-a"}, helpShort: true}
	case "gem":
		return &cliSpec{values: []string{"--host", "--key", "-k", "--otp", "--config-file"}, helpShort: true}
	case "firebase":
		return &cliSpec{values: []string{"--project", "-P", "--only", "--except", "--token", "--config", "-c", "--message", "-m"}, helpShort: true,
			destroys: []string{"delete", "remove"}}
	case "gcloud":
		return &cliSpec{values: []string{"--project", "--account", "--configuration", "--region", "--zone", "--format", "--verbosity"}, helpShort: false,
			destroys: []string{"delete", "rm", "destroy"}}
	case "aws":
		return &cliSpec{values: []string{"--profile", "--region", "--output", "--endpoint-url", "--query", "--cli-read-timeout", "--cli-connect-timeout", "--ca-bundle", "--color"},
			dry: map[string][]string{"--dry-run": nil, "--dryrun": nil}, destroys: []string{"delete-*", "terminate-*", "purge-*", "rb", "rm"}}
	case "az":
		return &cliSpec{values: []string{"--subscription", "--output", "-o", "--query", "--resource-group", "-g", "--name", "-n"}, helpShort: true,
			destroys: []string{"delete", "delete-*", "purge"}}
	case "heroku":
		return &cliSpec{values: []string{"--app", "-a", "--remote", "-r", "--confirm"}, helpShort: true,
			destroys: []string{"destroy", "delete", "reset"}}
	case "supabase":
		return &cliSpec{values: []string{"--workdir", "--project-ref", "--db-url", "--profile", "--output", "-o"}, helpShort: true,
			dry: map[string][]string{"--dry-run": {"false"}}, destroys: []string{"delete", "reset", "rm"}}
	case "doctl":
		return &cliSpec{values: []string{"--access-token", "-t", "--context", "--config", "-c", "--output", "-o", "--api-url", "-u", "--format"}, helpShort: true,
			destroys: []string{"delete", "d", "del", "rm"}}
	case "pulumi":
		return &cliSpec{values: []string{"--cwd", "-C", "--stack", "-s", "--color", "--config-file", "--message", "-m", "--target", "-t", "--parallel", "-p"}, helpShort: true,
			dry: map[string][]string{"--preview-only": {"false"}}, destroys: []string{"destroy", "rm"}}
	case "mysqladmin":
		return &cliSpec{values: []string{"-u", "--user", "-h", "--host", "-P", "--port", "-S", "--socket", "--defaults-file", "-c", "--count", "-i", "--sleep"},
			helpShort: false, destroys: []string{"drop"}}
	}
	return nil
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// cliAlias is the tool another name of it names (the name itself when it
// is no alias).
func cliAlias(name string) string {
	switch name {
	case "podman":
		return "docker"
	case "oc":
		return "kubectl"
	case "tofu":
		return "terraform"
	case "flyctl":
		return "fly"
	}
	return name
}

func cliSpecOf(name string) (*cliSpec, string) {
	name = cliAlias(name)
	if spec, ok := builtSpecs.Load(name); ok {
		return spec.(*cliSpec), name
	}
	built := newCLISpec(name)
	if built == nil {
		return nil, name
	}
	spec, _ := builtSpecs.LoadOrStore(name, built)
	return spec.(*cliSpec), name
}

// builtSpecs are the tools' tables built so far, by tool.
var builtSpecs sync.Map

// isCLIModelled: the tool is read by its CLI model (which runs the
// patterns on its canonical words itself).
func isCLIModelled(name string) bool {
	s, _ := cliSpecOf(name)
	return s != nil || name == "rsync"
}

// cliRead is one reading of a tool's command line: its subcommand words
// (canonical, wrappers gone), the other words (options before the
// subcommand included), and whether nothing happens.
type cliRead struct {
	subs  []string
	rest  []arg
	inert string // "help" or "dry run"
}

// readCLI reads a command line with the tool's table; an option the table
// does not know may take the next word, which is then read both as its
// value and as the subcommand (at most four readings).
func readCLI(s *cliSpec, args []arg) []cliRead {
	type state struct {
		i    int
		subs []string
		opts []arg
	}
	var out []cliRead
	queue := []state{{}}
	for len(queue) > 0 && len(out) < 4 {
		st := queue[0]
		queue = queue[1:]
		i, subs, opts := st.i, st.subs, st.opts
	words:
		for i < len(args) {
			w := args[i]
			v := w.val
			switch {
			case !w.known:
				if len(subs) == 0 || wrapsSub(s, subs) {
					subs = append(subs, v) // a subcommand only the shell knows
					i++
				}
				break words
			case s.plus && len(subs) == 0 && strings.HasPrefix(v, "+"):
				i++
			case v == "--":
				if wrapsSub(s, subs) {
					i++
					continue
				}
				break words
			case strings.HasPrefix(v, "-") && len(v) > 1:
				name, _, glued := strings.Cut(v, "=")
				n := 1
				switch {
				case glued:
				case slices.Contains(s.values, name):
					n = 2
				case len(name) > 2 && name[1] != '-' && slices.Contains(s.values, name[:2]):
				case slices.Contains(s.bools, name) || s.dry[name] != nil || isHelpFlag(s, name):
					if s.nopt && i+1 < len(args) && args[i+1].known && (args[i+1].val == "true" || args[i+1].val == "false") {
						n = 2
					}
				case s.unknownValue && i+1 < len(args) && args[i+1].known && !strings.HasPrefix(args[i+1].val, "-") && (len(subs) == 0 || wrapsSub(s, subs)):
					// Both readings: the next word is this option's value,
					// or the subcommand.
					queue = append(queue, state{i: i + 2, subs: slices.Clone(subs), opts: append(slices.Clone(opts), args[i:i+2]...)})
				}
				opts = append(opts, args[i:min(i+n, len(args))]...)
				i += n
			default:
				if len(subs) > 0 && !wrapsSub(s, subs) {
					break words
				}
				sub := canonicalSub(s, v)
				subs = append(subs, sub)
				i++
				if n, ok := s.wraps[sub]; ok {
					i += n
					continue
				}
				break words
			}
		}
		r := cliRead{rest: append(opts, args[min(i, len(args)):]...)}
		for _, sub := range subs {
			if _, ok := s.wraps[sub]; !ok {
				r.subs = append(r.subs, sub)
			}
		}
		r.inert = cliInert(s, args, r)
		out = append(out, r)
	}
	return out
}

func wrapsSub(s *cliSpec, subs []string) bool {
	if len(subs) == 0 {
		return false
	}
	_, ok := s.wraps[subs[len(subs)-1]]
	return ok
}

// canonicalSub resolves a subcommand's alias or unique abbreviation.
func canonicalSub(s *cliSpec, v string) string {
	if c, ok := s.aliases[v]; ok {
		return c
	}
	if len(s.abbrev) == 0 || slices.Contains(s.abbrev, v) {
		return v
	}
	match := ""
	for _, c := range s.abbrev {
		if strings.HasPrefix(c, v) {
			if match != "" {
				return v // ambiguous
			}
			match = c
		}
	}
	if match == "" {
		return v
	}
	if c, ok := s.aliases[match]; ok {
		return c
	}
	return match
}

func isHelpFlag(s *cliSpec, name string) bool {
	return name == "--help" || s.helpShort && name == "-h" || s.helpDash && (name == "-help" || name == "-h")
}

// cliInert says why a reading does nothing: a help request, or a dry run
// as the tool parses it (the last dry-run option wins; a value the tool
// reads as "no" makes it no dry run).
func cliInert(s *cliSpec, args []arg, r cliRead) string {
	if len(r.subs) > 0 && r.subs[0] == "help" {
		return "help"
	}
	dry := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.known {
			continue
		}
		if w.val == "--" {
			break
		}
		name, val, glued := strings.Cut(w.val, "=")
		if isHelpFlag(s, name) && !glued {
			return "help"
		}
		if slices.Contains(s.values, name) && !glued {
			i++ // a value, not an option
			continue
		}
		no, ok := s.dry[name]
		if !ok && s.dry != nil {
			if base, neg := strings.CutPrefix(name, "--no-"); neg {
				if _, isDry := s.dry["--"+base]; isDry {
					dry = false
				}
			}
			continue
		}
		if !ok {
			continue
		}
		switch {
		case glued:
			dry = !slices.Contains(no, strings.ToLower(val))
		case s.nopt && i+1 < len(args) && args[i+1].known && (args[i+1].val == "true" || args[i+1].val == "false"):
			i++
			dry = args[i].val == "true"
		default:
			dry = true
		}
	}
	if dry {
		return "dry run"
	}
	return ""
}

// runnerSub: the subcommand is one that runs the words after it (npm
// exec and its alias x, pnpm and yarn dlx, bun x, uv and poetry run, uv
// tool run), whatever global options or wrapper subcommands came first.
func runnerSub(tool string, subs []string) bool {
	if len(subs) == 0 {
		return false
	}
	last := subs[len(subs)-1]
	switch tool {
	case "npm", "pnpm", "yarn", "bun":
		return last == "exec" || last == "dlx" || last == "x"
	case "uv", "poetry", "hatch":
		return last == "run" || last == "exec"
	}
	return false
}

func argsOf(words []string) []arg {
	out := make([]arg, len(words))
	for i, w := range words {
		out[i] = arg{val: w, known: true}
	}
	return out
}
