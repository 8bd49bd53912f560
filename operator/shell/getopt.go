package shell

import "strings"

// GNU getopt_long, modelled for the tools whose options decide what they
// destroy (rm, xargs): a long option may be abbreviated to any prefix that
// names one option (rm --rec --for is rm -rf), short flags cluster, a short
// option's value may be glued on, and -- ends the options. Unless the
// option string starts with "+", options may follow operands.

type longOpt struct {
	name string
	arg  optArg
	key  string // the short letter it is the same as, or the long name
}

type getoptSpec struct {
	shorts  string // letters; ":" after one takes a value, "::" an optional value
	longs   []longOpt
	inOrder bool // "+": the first operand ends the options
}

type getoptResult struct {
	set      map[string]int // key → times given
	values   map[string]string
	operands []arg // operands, in order; for inOrder, the first operand and everything after it
	bad      bool  // the tool rejects the command line: nothing runs
}

func (g *getoptSpec) shortArg(c byte) (optArg, bool) {
	i := strings.IndexByte(g.shorts, c)
	if i < 0 || c == ':' {
		return noValue, false
	}
	switch {
	case strings.HasPrefix(g.shorts[i+1:], "::"):
		return optionalValue, true
	case strings.HasPrefix(g.shorts[i+1:], ":"):
		return needsValue, true
	}
	return noValue, true
}

func (g *getoptSpec) parse(args []arg) getoptResult {
	r := getoptResult{set: map[string]int{}, values: map[string]string{}}
	for i := 0; i < len(args); i++ {
		w := args[i]
		s := w.val
		switch {
		case !w.known || s == "-" || len(s) < 2 || s[0] != '-':
			if g.inOrder {
				r.operands = append(r.operands, args[i:]...)
				return r
			}
			r.operands = append(r.operands, w)
		case s == "--":
			r.operands = append(r.operands, args[i+1:]...)
			return r
		case strings.HasPrefix(s, "--"):
			name, value, hasValue := strings.Cut(s[2:], "=")
			var match *longOpt
			ambiguous := false
			for k := range g.longs {
				o := &g.longs[k]
				if o.name == name {
					match, ambiguous = o, false
					break
				}
				if strings.HasPrefix(o.name, name) {
					// glibc: prefixes of options that do the same thing
					// are not ambiguous.
					if match != nil && (match.key != o.key || match.arg != o.arg) {
						ambiguous = true
					}
					if match == nil {
						match = o
					}
				}
			}
			if match == nil || ambiguous {
				r.bad = true
				return r
			}
			switch match.arg {
			case noValue:
				if hasValue {
					r.bad = true
					return r
				}
			case needsValue:
				if !hasValue {
					if i+1 >= len(args) {
						r.bad = true
						return r
					}
					i++
					value, hasValue = args[i].val, true
				}
			}
			r.set[match.key]++
			if hasValue {
				r.values[match.key] = value
			}
		default:
			for j := 1; j < len(s); j++ {
				c := s[j]
				kind, ok := g.shortArg(c)
				if !ok {
					r.bad = true
					return r
				}
				key := string(c)
				r.set[key]++
				if kind == noValue {
					continue
				}
				value := s[j+1:]
				if value == "" && kind == needsValue {
					if i+1 >= len(args) {
						r.bad = true
						return r
					}
					i++
					value = args[i].val
				}
				if value != "" || kind == needsValue {
					r.values[key] = value
				}
				break
			}
		}
	}
	return r
}

// rmOptions: GNU coreutils rm.
var rmOptions = getoptSpec{
	shorts: "dfirvIR",
	longs: []longOpt{
		{"force", noValue, "f"}, {"interactive", optionalValue, "interactive"}, {"one-file-system", noValue, "one-file-system"},
		{"no-preserve-root", noValue, "no-preserve-root"}, {"preserve-root", optionalValue, "preserve-root"},
		{"recursive", noValue, "r"}, {"dir", noValue, "d"}, {"verbose", noValue, "v"},
		{"help", noValue, "help"}, {"version", noValue, "version"},
	},
}

// shredOptions: GNU coreutils shred (it has no -h: shred -h is refused).
var shredOptions = getoptSpec{
	shorts: "fn:s:uvxz",
	longs: []longOpt{
		{"force", noValue, "f"}, {"iterations", needsValue, "n"}, {"random-source", needsValue, "random-source"},
		{"size", needsValue, "s"}, {"remove", optionalValue, "u"}, {"verbose", noValue, "v"}, {"exact", noValue, "x"},
		{"zero", noValue, "z"}, {"help", noValue, "help"}, {"version", noValue, "version"},
	},
}

// xargsOptions: GNU findutils xargs ("+": its options end at the command).
var xargsOptions = getoptSpec{
	shorts:  "0a:E:e::i::I:l::L:n:oprs:txP:d:",
	inOrder: true,
	longs: []longOpt{
		{"null", noValue, "0"}, {"arg-file", needsValue, "a"}, {"delimiter", needsValue, "d"}, {"eof", optionalValue, "e"},
		{"replace", optionalValue, "i"}, {"max-lines", optionalValue, "l"}, {"max-args", needsValue, "n"},
		{"open-tty", noValue, "o"}, {"interactive", noValue, "p"}, {"no-run-if-empty", noValue, "r"},
		{"max-chars", needsValue, "s"}, {"verbose", noValue, "t"}, {"show-limits", noValue, "show-limits"},
		{"exit", noValue, "x"}, {"max-procs", needsValue, "P"}, {"process-slot-var", needsValue, "process-slot-var"},
		{"help", noValue, "help"}, {"version", noValue, "version"},
	},
}

type optArg uint8

const (
	noValue optArg = iota
	needsValue
	optionalValue
)

// refusedLine: a tool whose options are modelled (getopt) rejects the
// command line, or is asked for help or its version: it exits having done
// nothing (shred -h is an invalid option, not help).
func refusedLine(name string, args []arg) bool {
	if name != "shred" {
		return false
	}
	for _, w := range args {
		if !w.known {
			return false
		}
	}
	r := shredOptions.parse(args)
	return r.bad || r.set["help"] > 0 || r.set["version"] > 0
}
