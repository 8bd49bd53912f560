package browsertest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/laserkit/laserkit/internal/testenv"
)

// Chromium finds the browser: $LASERKIT_CHROMIUM, else chromium,
// chromium-browser, google-chrome or google-chrome-stable on PATH.
func Chromium() (string, error) {
	if p := os.Getenv("LASERKIT_CHROMIUM"); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium on PATH (install Debian's chromium package: apt-get install -y chromium; or set LASERKIT_CHROMIUM)")
}

// Require returns the browser, or skips the test with a loud banner; under
// CI=true a missing browser fails the test instead.
func Require(t testing.TB) string {
	t.Helper()
	exe, err := Chromium()
	if err == nil {
		return exe
	}
	fmt.Fprintln(os.Stderr, "\n"+strings.Repeat("!", 78)+"\n!! BROWSER TEST NOT RUN: "+err.Error()+"\n"+strings.Repeat("!", 78))
	testenv.SkipOrFail(t, "%v", err)
	return ""
}

// Flags are the command-line flags the browser runs with: headless, no
// sandbox (root in CI), and every background connection off, because this
// machine's closed network refuses them; the host resolver maps every name
// to nothing, so not even a lookup can leave.
func Flags(userDataDir string, width, height int) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(userDataDir), chromedp.WindowSize(width, height),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("proxy-server", "127.0.0.1:9"),
	}
}

// Result is what a page did while it loaded.
type Result struct {
	URL string
	// Requests are the URLs the page asked for, the page itself included.
	Requests []string
	// Problems are console errors and warnings, exceptions and browser log
	// entries of level warning or error.
	Problems []string
	// Counts has, per selector asked about, how many elements match and how
	// many of them are laid out with a non-empty box and not hidden.
	Counts map[string][2]int
	// Screenshot is a PNG of the whole page.
	Screenshot []byte
	// DarkBackground is the page's computed background colour when the
	// browser prefers a dark scheme.
	DarkBackground, LightBackground string
	// Overflow is true when the page is wider than the window (it scrolls
	// sideways, which a phone reader should never have to).
	Overflow bool
}

// Options say how to load a page.
type Options struct {
	Width, Height int
	// Selectors to count (visible ones apart).
	Selectors []string
	// Screenshot takes a full-page PNG; Viewport one of the window only.
	Screenshot bool
	Viewport   bool
	// Timeout for the whole load (0: 60 s).
	Timeout time.Duration
}

// Load opens file in a fresh browser with its own profile directory, the
// network emulated offline, and reports what happened.
func Load(ctx context.Context, exe, file string, o Options) (*Result, error) {
	if o.Width == 0 {
		o.Width, o.Height = 1100, 900
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "laserkit-chromium-")
	if err != nil {
		return nil, err
	}
	defer removeAllRetry(profile)

	opts := append(Flags(profile, o.Width, o.Height), chromedp.ExecPath(exe))
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()

	res := &Result{URL: (&url.URL{Scheme: "file", Path: abs}).String(), Counts: map[string][2]int{}}
	var mu sync.Mutex
	record := func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		request, problem := observe(ev)
		if request != "" {
			res.Requests = append(res.Requests, request)
		}
		if problem != "" {
			res.Problems = append(res.Problems, problem)
		}
	}
	// Start the browser with the listener in place, then cut the network
	// before the page is asked for.
	if err := chromedp.Do(bctx); err != nil {
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	tctx, cancelT := context.WithTimeout(bctx, o.Timeout)
	defer cancelT()
	if err := chromedp.Listen(tctx, record); err != nil {
		return nil, err
	}
	// A narrow window is a phone: emulate its viewport (headless windows
	// have a minimum width), touch and mobile layout included.
	if o.Width < 600 {
		if err := chromedp.Do(tctx, chromedp.EmulateViewport(int64(o.Width), int64(o.Height), chromedp.EmulateMobile, chromedp.EmulateScale(2))); err != nil {
			return nil, fmt.Errorf("emulate a phone: %w", err)
		}
	}
	offline := []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
	if _, err := chromedp.Call(tctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: offline}); err != nil {
		return nil, fmt.Errorf("take the network offline: %w", err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(res.URL)); err != nil {
		return nil, fmt.Errorf("load %s: %w", res.URL, err)
	}
	if err := measure(tctx, o, res); err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	res.Requests = append([]string(nil), res.Requests...)
	res.Problems = append([]string(nil), res.Problems...)
	return res, nil
}

// measure reads the loaded page into res: the elements o counts, whether
// it overflows the window, its background in each colour scheme, and the
// screenshot o asks for.
func measure(tctx context.Context, o Options, res *Result) error {
	// Count elements and their visible boxes.
	if len(o.Selectors) > 0 {
		js := `(function(sels){var out={};sels.forEach(function(s){var all=document.querySelectorAll(s),vis=0;
all.forEach(function(e){var r=e.getBoundingClientRect(),cs=getComputedStyle(e);
if((r.width>0||r.height>0)&&cs.visibility!=='hidden'&&cs.display!=='none'&&parseFloat(cs.opacity)>0)vis++;});
out[s]=[all.length,vis];});return out;})(` + jsonStrings(o.Selectors) + `)`
		counts, err := chromedp.Run(tctx, chromedp.Evaluate[map[string][2]int](js))
		if err != nil {
			return fmt.Errorf("count elements: %w", err)
		}
		res.Counts = counts
	}
	var err error
	if res.Overflow, err = chromedp.Run(tctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)); err != nil {
		return fmt.Errorf("measure the width: %w", err)
	}
	// The colour scheme follows the browser's preference.
	bg := `getComputedStyle(document.body).backgroundColor`
	scheme := func(v string) (string, error) {
		if err := chromedp.Do(tctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
			return err
		})); err != nil {
			return "", err
		}
		return chromedp.Run(tctx, chromedp.Evaluate[string](bg))
	}
	if res.DarkBackground, err = scheme("dark"); err != nil {
		return fmt.Errorf("emulate a dark scheme: %w", err)
	}
	if res.LightBackground, err = scheme("light"); err != nil {
		return fmt.Errorf("emulate a light scheme: %w", err)
	}
	if o.Screenshot || o.Viewport {
		shot := chromedp.FullScreenshot(100)
		if o.Viewport {
			shot = chromedp.CaptureScreenshot()
		}
		png, err := chromedp.Run(tctx, shot)
		if err != nil {
			return fmt.Errorf("screenshot: %w", err)
		}
		res.Screenshot = png
	}
	return nil
}

func jsonStrings(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for _, r := range s {
			switch r {
			case '"', '\\':
				b.WriteByte('\\')
				b.WriteRune(r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
	}
	b.WriteByte(']')
	return b.String()
}

// Foreign lists the requests that were not for the page itself.
func (r *Result) Foreign() []string {
	var out []string
	for _, u := range r.Requests {
		if u != r.URL {
			out = append(out, u)
		}
	}
	return out
}

// removeAllRetry removes a profile directory Chromium's children may still
// be writing to for a moment after it stops.
func removeAllRetry(dir string) {
	for range 50 {
		if os.RemoveAll(dir) == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
