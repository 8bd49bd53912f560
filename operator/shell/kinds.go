package shell

// Facts about program names the models share: shells, awks, and the
// options with which an interpreter takes its program as an argument.

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "yash", "fish":
		return true
	}
	return false
}

func isAwk(name string) bool {
	switch name {
	case "awk", "gawk", "mawk", "nawk":
		return true
	}
	return false
}

// codeFlags are the options with which an interpreter takes its program as
// an argument, by the interpreter's name without version digits. The
// lists are package-level slices of constants, which the compiler lays
// out statically (returned from a switch as literals they would be
// allocated on every call; as a map they were built at package init).
func codeFlags(base string) []string {
	switch base {
	case "python", "pypy":
		return flagsC
	case "node", "nodejs", "bun":
		return flagsNode
	case "deno":
		return flagsEval
	case "ruby", "lua", "rscript", "osascript":
		return flagsE
	case "perl":
		return flagsPerl
	case "php":
		return flagsR
	case "pwsh", "powershell":
		return flagsPowerShell
	}
	return nil
}

var (
	flagsC          = []string{"-c"}
	flagsNode       = []string{"-e", "--eval", "-p", "--print"}
	flagsEval       = []string{"eval"}
	flagsE          = []string{"-e"}
	flagsPerl       = []string{"-e", "-E"}
	flagsR          = []string{"-r"}
	flagsPowerShell = []string{"-c", "-command"}
)
