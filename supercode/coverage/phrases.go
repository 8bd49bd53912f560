package coverage

import (
	"strings"

	"github.com/dlclark/regexp2"

	"github.com/laserkit/laserkit/internal/firstuse"
)

// The reference reads a tool's response for failure in words (a tool that
// exited 0 but printed "fatal:" failed), and its own refusal as no failure
// at all. Its patterns are Python re; regexp2 reads \b, \w and \s the same
// Unicode way. Compiled on first use: a hook pays only for what it reads.

var (
	failRE = firstuse.Value[*regexp2.Regexp]{New: func() *regexp2.Regexp {
		return regexp2.MustCompile(`^\s*error\b|:\s*error:|command not found|no such file or directory|permission denied|`+
			`^\s*Traceback \(most recent call last\)|\bBUILD FAILED\b|\bEXPORT FAILED\b|\bARCHIVE FAILED\b|`+
			`\bTHIS CALL DID NOT RUN\b|\bfatal:|\bfatal error\b|^\s*FAIL\b|\bexit code [1-9]|\bexit status [1-9]|`+
			`\bAssertionError\b|\bSyntaxError\b`, regexp2.IgnoreCase|regexp2.Multiline)
	}}
	notFailRE = firstuse.Value[*regexp2.Regexp]{New: func() *regexp2.Regexp {
		return regexp2.MustCompile(`\b(0|no|zero)\s+(errors?|failures?)\b|\berrors?:\s*0\b|\bno errors found\b`, regexp2.IgnoreCase)
	}}
	selfRefusalRE = firstuse.Value[*regexp2.Regexp]{New: func() *regexp2.Regexp {
		return regexp2.MustCompile(`laserbrain gate:.*?\bcoverage\b`, regexp2.IgnoreCase|regexp2.Singleline)
	}}
	reportRE = firstuse.Value[*regexp2.Regexp]{New: func() *regexp2.Regexp {
		return regexp2.MustCompile(`^\s*(?:confirmed|found|promoted|shipped|verified|discovered|learned|identified|determined|`+
			`established|noted|observed|settled|decided|chose|approved|completed|finished|landed|`+
			`merged|fixed|added|committed|created|validated|pushed|reviewed|replaced|updated|built|`+
			`wrote|ran|removed|renamed|moved|deleted|refactored|implemented|deployed|published|`+
			`tested|checked|design settled|build (?:blocked|failed)|blocked by)\b`, regexp2.IgnoreCase)
	}}
)

func matches(re *regexp2.Regexp, s string) bool {
	ok, err := re.MatchString(s)
	return err == nil && ok
}

// selfRefusal: the text is the coverage gate refusing its own agent — the
// call never ran, so it is no failure of the work.
func selfRefusal(text string) bool {
	return text != "" && mayHold(text, []string{"laserbrain gate:"}) && matches(selfRefusalRE.Get(), text)
}

// failWords: every failure pattern holds one of these (lowercased), so a
// text with none of them cannot match — the common case, decided without
// running a pattern.
var failWords = []string{"error", "not found", "no such file", "permission denied", "traceback", "fail", "did not run", "fatal", "exit"}

// mayHold reports whether text could hold one of words, ignoring case. It
// answers yes for any text that is not ASCII: Python folds case over all
// of Unicode (ſ reads as s), so only an ASCII text can be ruled out.
func mayHold(text string, words []string) bool {
	for i := 0; i < len(text); i++ {
		if text[i] >= 0x80 {
			return true
		}
	}
	low := strings.ToLower(text)
	for _, w := range words {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// looksFailed: a response whose text says it failed, though nothing
// structural did (a tool that reports failure in prose).
func looksFailed(text string) bool {
	if text == "" || !mayHold(text, failWords) || selfRefusal(text) || matches(notFailRE.Get(), text) {
		return false
	}
	return matches(failRE.Get(), text)
}

// readsAsReport: a goal that narrates what happened ("fixed the parser")
// rather than naming what is pursued.
func readsAsReport(goal string) bool {
	if goal == "" {
		return false
	}
	m, err := reportRE.Get().FindStringMatch(goal)
	return err == nil && m != nil && m.Index == 0
}
