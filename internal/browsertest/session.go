package browsertest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Session is a live page in a fresh headless browser, for a page a local
// server keeps changing: the network is off but for addresses given as
// IP literals on this machine (the browser resolves no name and uses a
// proxy that does not exist, which loopback bypasses), and every request
// and complaint is recorded.
type Session struct {
	ctx     context.Context
	cancel  context.CancelFunc
	profile string

	mu       sync.Mutex
	requests []string
	problems []string
}

// Open starts the browser with a window of width×height (a width under
// 600 is a phone: its viewport, touch and scale are emulated).
func Open(ctx context.Context, exe string, width, height int) (*Session, error) {
	profile, err := os.MkdirTemp("", "laserkit-chromium-")
	if err != nil {
		return nil, err
	}
	// No name resolves, but this machine's addresses as literals do.
	opts := append(Flags(profile, width, height), chromedp.ExecPath(exe),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE [::1]"))
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	s := &Session{ctx: bctx, profile: profile, cancel: func() { cancelB(); cancelA() }}
	if err := chromedp.Do(bctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	if err := chromedp.Listen(bctx, s.record); err != nil {
		s.Close()
		return nil, err
	}
	if width < 600 {
		if err := chromedp.Do(bctx, chromedp.EmulateViewport(int64(width), int64(height), chromedp.EmulateMobile, chromedp.EmulateScale(2))); err != nil {
			s.Close()
			return nil, fmt.Errorf("emulate a phone: %w", err)
		}
	}
	return s, nil
}

func (s *Session) record(ev any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	request, problem := observe(ev)
	if request != "" {
		s.requests = append(s.requests, request)
	}
	if problem != "" {
		s.problems = append(s.problems, problem)
	}
}

// observe is what a page event says: the URL of a request the page made,
// or a problem it showed (a console error, warning or failed assertion, an
// uncaught exception, a browser log error or warning).
func observe(ev any) (request, problem string) {
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		return e.Request.URL, ""
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			return "", "console." + string(e.Type) + ": " + strings.Join(parts, " ")
		}
	case *runtime.EventExceptionThrown:
		return "", "exception: " + (&chromedp.ExceptionError{ExceptionDetails: e.ExceptionDetails}).Error()
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
			return "", "log " + string(e.Entry.Level) + " (" + string(e.Entry.Source) + "): " + e.Entry.Text + " " + e.Entry.URL
		}
	}
	return "", ""
}

// Do runs chromedp actions on the page, within timeout.
func (s *Session) Do(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	defer cancel()
	return chromedp.Do(ctx, actions...)
}

// Navigate loads url and waits for the page's load event.
func (s *Session) Navigate(url string) error {
	return s.Do(30*time.Second, chromedp.Navigate(url))
}

// Click clicks the first element the CSS selector matches, once it is
// visible.
func (s *Session) Click(css string) error {
	return s.Do(10*time.Second, chromedp.Click(chromedp.CSS(css)))
}

// SetValue sets the value of the first input the CSS selector matches.
func (s *Session) SetValue(css, value string) error {
	return s.Do(10*time.Second, chromedp.SetValue(chromedp.CSS(css), value))
}

// Eval evaluates a JavaScript expression on the page (a promise is
// awaited).
func Eval[T any](s *Session, js string) (T, error) {
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

// Phone makes the window a phone's (width×height, touch, mobile layout).
func (s *Session) Phone(width, height int) error {
	return s.Do(10*time.Second, chromedp.EmulateViewport(int64(width), int64(height), chromedp.EmulateMobile, chromedp.EmulateScale(2)))
}

// WaitTrue waits until the JavaScript expression is true on the page,
// asked at every animation frame, for at most timeout; it returns how
// long that took.
func (s *Session) WaitTrue(js string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(s.ctx, timeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(timeout)))
	took := time.Since(start)
	if err != nil {
		return took, fmt.Errorf("waited %s for %s: %w", took.Round(time.Millisecond), js, err)
	}
	return took, nil
}

// Scheme makes the page prefer a dark (or light) colour scheme.
func (s *Session) Scheme(dark bool) error {
	v := "light"
	if dark {
		v = "dark"
	}
	return s.Do(10*time.Second, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
		return err
	}))
}

// Screenshot is a PNG of the window as it is.
func (s *Session) Screenshot() ([]byte, error) {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.CaptureScreenshot())
}

// Requests are the URLs the page asked for, its own included.
func (s *Session) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Problems are console errors and warnings, exceptions and browser log
// entries of level warning or error.
func (s *Session) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

// Close ends the browser and removes its profile.
func (s *Session) Close() {
	s.cancel()
	removeAllRetry(s.profile)
}
