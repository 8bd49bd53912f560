package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/laserkit/laserkit/internal/browsertest"
	"github.com/laserkit/laserkit/internal/cli"
	"github.com/laserkit/laserkit/internal/fsx"
)

func main() {
	width := flag.Int("width", 1000, "window width")
	height := flag.Int("height", 1300, "window height (the picture's height)")
	ready := flag.String("ready", "", "for a live page: a JavaScript expression that is true once the page is ready")
	flag.Parse()
	if flag.NArg() != 2 {
		cli.Finish("screenshot", cli.Usagef("usage: screenshot [-width N] [-height N] [-ready JS] PAGE.html|http://127.0.0.1:PORT/… OUT.png"))
	}
	page, out := flag.Arg(0), flag.Arg(1)
	if strings.HasPrefix(page, "http://") {
		cli.Finish("screenshot", live(page, out, *ready, *width, *height))
	}
	cli.Finish("screenshot", file(page, out, *width, *height))
}

func file(page, out string, width, height int) error {
	exe, err := browsertest.Chromium()
	if err != nil {
		return err
	}
	r, err := browsertest.Load(context.Background(), exe, page, browsertest.Options{Width: width, Height: height, Viewport: true})
	if err != nil {
		return err
	}
	if f := r.Foreign(); len(f) > 0 {
		return fmt.Errorf("the page asked for %v", f)
	}
	if len(r.Problems) > 0 {
		return fmt.Errorf("the page complained: %v", r.Problems)
	}
	return fsx.WriteFile(out, r.Screenshot, 0o644)
}

// live opens a page a local server serves (laserbrain ui's one-time link),
// waits until ready is true, and takes the window.
func live(link, out, ready string, width, height int) error {
	exe, err := browsertest.Chromium()
	if err != nil {
		return err
	}
	s, err := browsertest.Open(context.Background(), exe, width, height)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Navigate(link); err != nil {
		return err
	}
	if ready != "" {
		if _, err := s.WaitTrue(ready, 30*time.Second); err != nil {
			return err
		}
	}
	base := link
	if i := strings.Index(link[len("http://"):], "/"); i >= 0 {
		base = link[:len("http://")+i]
	}
	for _, u := range s.Requests() {
		if !strings.HasPrefix(u, base+"/") {
			return fmt.Errorf("the page asked for %s", u)
		}
	}
	if p := s.Problems(); len(p) > 0 {
		return fmt.Errorf("the page complained: %v", p)
	}
	png, err := s.Screenshot()
	if err != nil {
		return err
	}
	return fsx.WriteFile(out, png, 0o644)
}
