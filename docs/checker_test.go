package docs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The anchors GitHub gives these headings when it renders them.
func TestSlugIsGitHubsAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Hello World":               "hello-world",
		"heading with a period.txt": "heading-with-a-periodtxt",
		"I ♥ unicode":               "i--unicode",
		"foo_foo_bar":               "foo_foo_bar",
		"foo _italic_ bar":          "foo-italic-bar",
		"`a.b` c":                   "ab-c",
		"Via [remark-cli][]":        "via-remark-cli",
		"1. not a list":             "1-not-a-list",
		"1) not a list":             "1-not-a-list",
		"😄 unicode emoji":           "-unicode-emoji",
		"第 1 步：软硬件环境需求及前置检查": "第-1-步软硬件环境需求及前置检查",
		"`code-abc`":                       "code-abc",
		"The person's acts, from the page": "the-persons-acts-from-the-page",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}

// A page with one good and three broken links, and links inside code that
// are not links: the checker names exactly the three.
func TestBrokenLinksFindsEachBrokenLink(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("other.md", "# Other\n\n## Title 1\n\n## Title 1\n\n```sh\n# not a heading\n```\n")
	write("page.md", strings.Join([]string{
		"# Page",
		"[fine](other.md#title-1-1), [here](#page), ![img](other.md), [web](https://example.com/x.md)",
		"[gone](missing.md)",
		"[no anchor](other.md#title-2) and [not a heading](other.md#not-a-heading)",
		"`[in a span](missing.md)`",
		"```",
		"[in a fence](missing.md)",
		"```",
	}, "\n"))
	var got []string
	for _, b := range brokenLinks(filepath.Join(dir, "page.md")) {
		_, msg, _ := strings.Cut(b, "page.md:")
		got = append(got, msg[:strings.Index(msg, ":")]+" "+strings.Fields(msg)[1])
	}
	want := []string{"3 missing.md:", "4 other.md#title-2:", "4 other.md#not-a-heading:"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("broken links = %q, want %q", got, want)
	}
}
