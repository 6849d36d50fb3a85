package history

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/record"
)

// openFiles lists the files of the database at path (the file, its -wal and
// its -shm) that this process still holds open. Linux lists its descriptors
// in /proc; elsewhere a file is taken to be open when it cannot be removed,
// which is what an open file means on Windows (elsewhere removal succeeds
// regardless, and the list is always empty).
func openFiles(t *testing.T, path string) []string {
	t.Helper()
	names := []string{path, path + "-wal", path + "-shm"}
	var open []string
	if runtime.GOOS == "linux" {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatalf("listing descriptors: %v", err)
		}
		for _, fd := range fds {
			target, err := os.Readlink("/proc/self/fd/" + fd.Name())
			if err != nil {
				continue // closed since the listing
			}
			for _, name := range names {
				if target == name {
					open = append(open, strings.TrimPrefix(target, path))
				}
			}
		}
		return open
	}
	for _, name := range names {
		if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
			open = append(open, err.Error())
		}
	}
	return open
}

// A retention pass stopped halfway, as Close stops one, must leave no file
// of the database open once the store is closed (see execStep). Each pass
// is stopped at a different point of its work: deleting old calls (their
// search index with them), downsampling samples in transactions, measuring
// and vacuuming.
func TestStoppedRetentionLeavesNoFileOpen(t *testing.T) {
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	stopped := 0
	for i := range 12 {
		path := filepath.Join(t.TempDir(), "history.db")
		opts := testOptions()
		opts.Now = func() time.Time { return base.Add(6 * time.Hour) }
		opts.MaxAge = time.Hour
		s, err := Open(context.Background(), path, opts)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		// Five hours of old records: a call a minute and a sample every 6 s.
		for k := range 3000 {
			at := base.Add(time.Duration(6*k) * time.Second)
			s.Observe(record.Event{Time: at, Server: "a", Kind: record.EventUsage,
				Usage: &record.Usage{CPUPercent: 10, RSSBytes: 1000, Processes: 1}})
			if k%10 == 0 {
				c := call(0, "a", "b", `{"path":"/tmp/x"}`)
				c.Start = at
				s.RecordCall(c)
			}
		}
		flush(t, s)
		ctx, cancel := context.WithCancel(context.Background())
		after := time.Duration(i) * 400 * time.Microsecond
		stop := time.AfterFunc(after, cancel)
		_, retainErr := s.Retain(ctx)
		stop.Stop()
		cancel()
		if errors.Is(retainErr, context.Canceled) {
			stopped++
		} else if retainErr != nil {
			t.Errorf("pass %d: Retain: %v", i, retainErr)
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatalf("pass %d: Close: %v", i, err)
		}
		if open := openFiles(t, path); len(open) > 0 {
			t.Errorf("pass %d, stopped after %v (Retain: %v): still open after Close: %v", i, after, retainErr, open)
		}
	}
	if stopped < 6 {
		t.Errorf("only %d of 12 passes were stopped before their end: the test checks too little", stopped)
	}
}
