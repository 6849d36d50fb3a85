package remoteauth_test

import (
	"context"
	"strings"
	"sync"
)

// recordingBrowser keeps the links it is asked to open and opens none: a
// user who has not acted yet.
type recordingBrowser struct {
	mu    sync.Mutex
	links []string
}

func (b *recordingBrowser) Open(_ context.Context, link string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.links = append(b.links, link)
	return nil
}

func (b *recordingBrowser) opened() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.links...)
}

func hasAny(s string, values []string) string {
	for _, v := range values {
		if v != "" && strings.Contains(s, v) {
			return v
		}
	}
	return ""
}
