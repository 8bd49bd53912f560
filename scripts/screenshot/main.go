package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/laserkit/laserkit/internal/browsertest"
	"github.com/laserkit/laserkit/internal/fsx"
)

func main() {
	width := flag.Int("width", 1000, "window width")
	height := flag.Int("height", 1300, "window height (the picture's height)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: screenshot [-width N] [-height N] PAGE.html OUT.png")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *width, *height); err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(page, out string, width, height int) error {
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
