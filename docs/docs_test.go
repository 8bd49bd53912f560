// Package docs holds the project's documentation pages; its test holds the
// README to a length that fits on a screen and every relative link of the
// README and of these pages to a file, and a heading, that exist.
package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines is how long the README may grow: what it is, install, the
// quick start, the uses and the client table, with the detail in docs/.
const readmeMaxLines = 600

func TestREADMEFitsOnAScreen(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, over %d: move the detail into a page of docs/ and link it", n, readmeMaxLines)
	}
}

func TestRelativeLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "../README.md")
	if len(pages) < 2 {
		t.Fatalf("no pages in docs/: %v", pages)
	}
	for _, p := range pages {
		for _, bad := range brokenLinks(p) {
			t.Error(bad)
		}
	}
}

// linkRE finds an inline link or image target: [text](target) or
// ![alt](target), the target up to the first space or closing parenthesis.
var linkRE = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// brokenLinks lists each relative link of the markdown file at page whose
// file does not exist, or whose #anchor names no heading of its page.
// Links inside code (fenced blocks, `spans`) are not links.
func brokenLinks(page string) []string {
	text, err := os.ReadFile(page)
	if err != nil {
		return []string{err.Error()}
	}
	var bad []string
	for i, line := range proseLines(string(text)) {
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					bad = append(bad, fmt.Sprintf("%s:%d: %s: no such file %s", page, i+1, target, path))
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(path, ".md") {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: an anchor into a file that is not markdown", page, i+1, target))
				continue
			}
			anchors, err := headingAnchors(path)
			if err != nil {
				bad = append(bad, err.Error())
				continue
			}
			if !anchors[anchor] {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: %s has no heading #%s", page, i+1, target, path, anchor))
			}
		}
	}
	return bad
}

// proseLines returns the file's lines with fenced code blocks blanked and
// code spans taken out, numbered as in the file.
func proseLines(text string) []string {
	lines := blankFences(strings.Split(text, "\n"))
	for i, l := range lines {
		lines[i] = codeSpanRE.ReplaceAllString(l, "")
	}
	return lines
}

// blankFences blanks the lines of fenced code blocks, their fences too, in
// place, and returns lines.
func blankFences(lines []string) []string {
	fence := ""
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case fence != "":
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
		case strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			fence = trimmed[:3]
		default:
			continue
		}
		lines[i] = ""
	}
	return lines
}

var codeSpanRE = regexp.MustCompile("`[^`]*`")

var (
	inlineLinkRE    = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	emphasisOpenRE  = regexp.MustCompile(`(^|\s)[_*]+(\S)`)
	emphasisCloseRE = regexp.MustCompile(`(\S)[_*]+(\s|$)`)
)

// headingAnchors is the set of anchors the headings of a markdown file get
// on GitHub: each heading's slug, and slug-N for its Nth repeat.
func headingAnchors(path string) (map[string]bool, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range blankFences(strings.Split(string(text), "\n")) {
		h := strings.TrimLeft(l, "#")
		if h == l || !strings.HasPrefix(h, " ") || len(l)-len(h) > 6 {
			continue
		}
		s := slug(h)
		if n := seen[s]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors, nil
}

// slug is GitHub's anchor for a heading: the text as rendered (a link's
// text without its target, emphasis marks taken off), lower case, letters,
// digits, '_' and '-' kept, each space a '-', everything else dropped.
func slug(heading string) string {
	text := inlineLinkRE.ReplaceAllString(strings.TrimSpace(heading), "$1")
	text = emphasisOpenRE.ReplaceAllString(text, "$1$2")
	text = emphasisCloseRE.ReplaceAllString(text, "$1$2")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
