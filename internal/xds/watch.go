package xds

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// watcher reports changes under the inputs: every directory below them,
// those created later included, and the directory of each input file.
type watcher struct {
	fs  *fsnotify.Watcher
	log *slog.Logger
	// changed holds at most one pending notice: a flood of events is one
	// reason to recompile.
	changed chan struct{}
}

func newWatcher(paths []string, log *slog.Logger) (*watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch inputs: %w", err)
	}
	w := &watcher{fs: fw, log: log, changed: make(chan struct{}, 1)}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err == nil && !fi.IsDir() {
			// Editors replace a file by renaming another over it, which
			// only the directory sees.
			err = fw.Add(filepath.Dir(p))
		} else if err == nil {
			err = w.addTree(p)
		}
		if err != nil {
			fw.Close()
			return nil, fmt.Errorf("watch %s: %w", p, err)
		}
	}
	return w, nil
}

// addTree watches root and every directory below it but version control's.
func (w *watcher) addTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" && p != root {
			return filepath.SkipDir
		}
		return w.fs.Add(p)
	})
}

// run forwards events to changed until ctx ends, then closes the watch.
func (w *watcher) run(ctx context.Context) {
	defer w.fs.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					if err := w.addTree(ev.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
						w.log.Warn("cannot watch a new directory; its changes are seen on the next recompile", "dir", ev.Name, "error", err)
					}
				}
			}
			w.log.Debug("input changed", "path", ev.Name, "op", ev.Op.String())
			select {
			case w.changed <- struct{}{}:
			default:
			}
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			// An overflowed queue lost events: recompile to be sure.
			w.log.Warn("watching the inputs", "error", err)
			select {
			case w.changed <- struct{}{}:
			default:
			}
		}
	}
}

// debounce calls fire once events stop for after, or after max since
// the first event of a burst, as istiod's PILOT_DEBOUNCE_AFTER and
// PILOT_DEBOUNCE_MAX do; force fires at once. fire runs in debounce's
// goroutine, so events during it start the next burst. It returns when
// ctx ends.
func debounce(ctx context.Context, events, force <-chan struct{}, after, max time.Duration, fire func()) {
	quiet := time.NewTimer(after)
	deadline := time.NewTimer(max)
	stop := func() { quiet.Stop(); deadline.Stop() }
	stop()
	defer stop()
	pending := false
	run := func() {
		stop()
		pending = false
		fire()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-force:
			run()
		case <-events:
			if !pending {
				pending = true
				deadline.Reset(max)
			}
			quiet.Reset(after)
		case <-quiet.C:
			run()
		case <-deadline.C:
			run()
		}
	}
}
