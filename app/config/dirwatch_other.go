//go:build !linux

package config

import (
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// fsnotifyWatcher is a dirWatcher on fsnotify: a name is reported for
// each creation, write, removal or rename of it.
type fsnotifyWatcher struct {
	w     *fsnotify.Watcher
	name  string
	names chan string
	done  chan struct{}
}

func newDirWatcher(dir, name string) (dirWatcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching the directory %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watching the directory %s: %w", dir, err)
	}
	fw := &fsnotifyWatcher{w: w, name: name, names: make(chan string), done: make(chan struct{})}
	go fw.run()
	return fw, nil
}

func (fw *fsnotifyWatcher) run() {
	defer close(fw.names)
	for ev := range fw.w.Events {
		// fsnotify (ReadDirectoryChangesW on Windows) cannot be asked for
		// one file: it reports every write to the history database and
		// the journal. They end here, not in a hand-off to Watch.
		if !ev.Has(fsnotify.Create|fsnotify.Write|fsnotify.Remove|fsnotify.Rename) || filepath.Base(ev.Name) != fw.name {
			continue
		}
		select {
		case fw.names <- fw.name:
		case <-fw.done:
			return
		}
	}
}

func (fw *fsnotifyWatcher) Names() <-chan string { return fw.names }
func (fw *fsnotifyWatcher) Errors() <-chan error { return fw.w.Errors }
func (fw *fsnotifyWatcher) Close() error {
	close(fw.done)
	return fw.w.Close()
}
