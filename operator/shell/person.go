package shell

import (
	"path"
	"slices"
	"strings"
)

// A person's commands: laserbrain's own commands that only the person
// supervising agents may run, because each one changes the supervision
// itself — granting an authorization, releasing a halted agent, cancelling
// a running loop, serving the live view whose acts do both of the first,
// installing or removing the hooks, moving the fleet's store, or undoing an
// agent's work back to a checkpoint. An agent
// that runs one through its shell tool would be supervising itself, so the
// gate denies them in every presence, and no authorization lets one
// through (as with writes into .ponder/): a person authorizing an agent to
// authorize itself is the same person running the command.
//
// The command is recognised by the executable's name after wrappers, the
// way every other command is (laserbrain or laserbrain-gate, any directory,
// `go run` of a laserbrain package), and by its subcommand after any
// leading options. A help request changes nothing and is left alone, and so
// is install's or uninstall's --dry-run, and undo's --list (and prune's
// --dry-run).

// personCommands are the subcommands a person runs, by their first word
// (ok false: not a person's); a nil list means every form, otherwise only
// the listed second words.
func personCommands(sub string) (second []string, ok bool) {
	switch sub {
	case "authorize", "install", "uninstall":
		return nil, true
	case "undo": // it rewrites the work tree and the refs back to a checkpoint
		return nil, true
	case "ui": // its acts release, answer and authorize
		return nil, true
	case "supervise":
		return personSupervise, true
	case "loop":
		return personLoop, true
	case "store":
		return personStore, true
	}
	return nil, false
}

// The second words, as package-level slices: laid out by the compiler,
// where a literal returned from personCommands would be allocated per call.
var (
	personSupervise = []string{"release", "accept-journal"}
	personLoop      = []string{"cancel"}
	personStore     = []string{"migrate", "init"}
)

// personLabel is the finding's label for a person's command.
func personLabel(words string) string {
	return "parsed: laserbrain " + words + " (a person's command: it changes the supervision itself)"
}

// isLaserbrain reports whether a command name is laserbrain's own binary.
func isLaserbrain(name string) bool { return name == "laserbrain" || name == "laserbrain-gate" }

// laserbrainModel reads a laserbrain command line: a person's command is a
// finding no authorization lets through.
func (a *analyzer) laserbrainModel(c *cmdCall) bool {
	a.laserbrain(c.args)
	return true
}

func (a *analyzer) laserbrain(rest []arg) {
	i := 0
	for i < len(rest) && rest[i].known && strings.HasPrefix(rest[i].val, "-") && rest[i].val != "--" {
		if helpWord(rest[i].val) {
			return
		}
		i++
	}
	if i >= len(rest) {
		return
	}
	if !rest[i].known {
		a.unknown("laserbrain subcommand known only at run time", "it may be a person's command")
		return
	}
	sub := rest[i].val
	second, ok := personCommands(sub)
	if !ok {
		return
	}
	words := sub
	tail := rest[i+1:]
	if second != nil {
		// The second word may follow options with values (supervise
		// --repo DIR release AGENT), which cobra reads as flags of the
		// parent: any such word before "--" counts.
		found := ""
		for _, w := range tail {
			if w.known && w.val == "--" {
				break
			}
			if w.known && slices.Contains(second, w.val) {
				found = w.val
				break
			}
		}
		if found == "" {
			return
		}
		words += " " + found
	}
	// Options up to "--" decide help and dry runs; what follows is an
	// argument (authorize -- --help authorizes a command named --help).
	for _, w := range tail {
		if w.known && w.val == "--" {
			break
		}
		if !w.known {
			continue
		}
		if helpWord(w.val) || (sub == "install" || sub == "uninstall" || sub == "undo") && (w.val == "--dry-run" || w.val == "--dry-run=true") ||
			sub == "undo" && (w.val == "--list" || w.val == "--list=true") {
			return
		}
	}
	a.add(Finding{Label: personLabel(words), Where: Executed, PersonOnly: true, Command: commandText("laserbrain", rest)})
}

func helpWord(s string) bool { return s == "-h" || s == "--help" || s == "--help=true" }

// goRunBuildFlag: the go build flags that take a value as the next word
// (go help build).
func goRunBuildFlag(flag string) bool {
	switch flag {
	case "-C", "-p", "-asmflags", "-buildmode", "-compiler", "-gccgoflags",
		"-gcflags", "-installsuffix", "-ldflags", "-mod", "-modfile", "-overlay",
		"-pgo", "-pkgdir", "-tags", "-toolexec", "-exec", "-covermode",
		"-coverpkg", "-o":
		return true
	}
	return false
}

// goRunLaserbrain reads `go run [build flags] PKG ARGS…`: when PKG is a
// laserbrain command (./cmd/laserbrain, the module path, @version, or its
// Go files), the words it runs are laserbrain ARGS…; otherwise nil.
func goRunLaserbrain(rest []arg) []arg {
	if len(rest) == 0 || !rest[0].known || rest[0].val != "run" {
		return nil
	}
	args := rest[1:]
	i := 0
	for i < len(args) && args[i].known && strings.HasPrefix(args[i].val, "-") {
		flag := strings.TrimPrefix(args[i].val, "-") // -flag and --flag are the same to Go's flag package
		name, _, hasValue := strings.Cut(flag, "=")
		i++
		if !hasValue && goRunBuildFlag("-"+name) {
			i++
		}
	}
	// The package: one path, or the .go files of one directory.
	j := i
	for j < len(args) && args[j].known && strings.HasSuffix(args[j].val, ".go") {
		j++
	}
	var pkg string
	switch {
	case j > i:
		pkg = path.Dir(args[i].val)
	case i < len(args) && args[i].known:
		pkg, _, _ = strings.Cut(args[i].val, "@")
		j = i + 1
	default:
		return nil
	}
	if !isLaserbrain(path.Base(strings.TrimSuffix(pkg, "/"))) {
		return nil
	}
	return append([]arg{{val: "laserbrain", known: true}}, args[j:]...)
}
