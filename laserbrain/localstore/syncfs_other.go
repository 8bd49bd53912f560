//go:build !linux

package localstore

import (
	"fmt"
	"os"
	"sync"
)

// syncFiles makes files durable: elsewhere than Linux, an fsync each (in
// parallel).
func syncFiles(files []*os.File) error { return syncAll(files) }

// syncAll syncs files concurrently: the file system commits them in a few
// journal transactions instead of one each.
func syncAll(files []*os.File) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	sem := make(chan struct{}, 16)
	for _, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f.Sync(); err != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("fsync %s: %w", f.Name(), err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}
