package sse

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/internal/testutil"
)

func TestWriteEvent(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"id, type and data", Event{ID: "42", Type: "call", Data: []byte(`{"a":1}`)}, "id: 42\nevent: call\ndata: {\"a\":1}\n\n"},
		{"type and data", Event{Type: "reset", Data: []byte("{}")}, "event: reset\ndata: {}\n\n"},
		{"data only", Event{Data: []byte(`{"text":"x"}`)}, "data: {\"text\":\"x\"}\n\n"},
		{"empty data", Event{ID: "1"}, "id: 1\ndata: \n\n"},
		{"lines of data", Event{Data: []byte("a\nb\r\nc\rd")}, "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"data ending in a newline", Event{Data: []byte("a\n")}, "data: a\ndata: \n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &countingWriter{}
			if err := WriteEvent(w, tt.ev); err != nil {
				t.Fatal(err)
			}
			if got := w.String(); got != tt.want {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
			if w.writes != 1 {
				t.Errorf("%d writes, want 1 (an event is written whole)", w.writes)
			}
		})
	}
}

func TestWriteEventRefusesLineBreaksInFields(t *testing.T) {
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"id", Event{ID: "1\nevent: x"}, "id"},
		{"type", Event{Type: "call\r"}, "type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			err := WriteEvent(&w, tt.ev)
			if err == nil || !strings.Contains(err.Error(), "event "+tt.want) || !strings.Contains(err.Error(), "line break") {
				t.Fatalf("err = %v, want one naming the event %s and the line break", err, tt.want)
			}
			if w.Len() != 0 {
				t.Errorf("wrote %q for a refused event", w.String())
			}
		})
	}
}

func TestWriteComment(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"keep-alive", ": keep-alive\n\n"},
		{"switchboard events", ": switchboard events\n\n"},
		{"", ": \n\n"},
		{"two\nlines", ": two\n: lines\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			var w bytes.Buffer
			if err := WriteComment(&w, tt.text); err != nil {
				t.Fatal(err)
			}
			if got := w.String(); got != tt.want {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWriteErrorsComeBack(t *testing.T) {
	boom := errors.New("connection gone")
	w := failingWriter{boom}
	if err := WriteEvent(w, Event{Data: []byte("x")}); !errors.Is(err, boom) {
		t.Errorf("WriteEvent: err = %v, want %v", err, boom)
	}
	if err := WriteComment(w, "keep-alive"); !errors.Is(err, boom) {
		t.Errorf("WriteComment: err = %v, want %v", err, boom)
	}
}

func TestStream(t *testing.T) {
	rec := httptest.NewRecorder()
	s := Start(rec)
	if rec.Code != http.StatusOK {
		t.Errorf("status %d, want 200", rec.Code)
	}
	for k, want := range map[string]string{
		"Content-Type":           "text/event-stream",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
		"X-Accel-Buffering":      "no",
	} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if rec.Flushed {
		t.Error("Start flushed; the caller decides when")
	}
	if err := s.Event(Event{ID: "7", Type: "state", Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Comment("keep-alive"); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if !rec.Flushed {
		t.Error("Flush did not flush")
	}
	if got, want := rec.Body.String(), "id: 7\nevent: state\ndata: {}\n\n: keep-alive\n\n"; got != want {
		t.Errorf("body %q, want %q", got, want)
	}
}

func TestFollow(t *testing.T) {
	boom := errors.New("client gone")
	tests := []struct {
		name   string
		values []string // sent, then the channel is closed
		fail   string   // write fails for this value
		want   string
	}{
		{"each value, flushed, until the channel closes", []string{"a", "skip", "b"}, "", "data: a\n\ndata: b\n\n"},
		{"a failed write ends it", []string{"a", "bad", "b"}, "bad", "data: a\n\n"},
		{"a closed channel at once", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &syncRecorder{header: http.Header{}}
			s := Start(w)
			c := make(chan string, len(tt.values))
			for _, v := range tt.values {
				c <- v
			}
			close(c)
			flushesAfter := map[string]int{}
			Follow(t.Context(), s, time.Hour, c, func(v string) error {
				switch v {
				case tt.fail:
					return boom
				case "skip":
					return nil
				}
				flushesAfter[v] = w.flushCount()
				return s.Event(Event{Data: []byte(v)})
			})
			if got := w.body(); got != tt.want {
				t.Errorf("body %q, want %q", got, tt.want)
			}
			if n, ok := flushesAfter["b"]; ok && n <= flushesAfter["a"] {
				t.Errorf("no flush between a and b (%d, %d)", flushesAfter["a"], n)
			}
		})
	}
}

// TestFollowKeepsAlive: a silent stream gets a keep-alive comment, flushed,
// every interval, until the client goes away.
func TestFollowKeepsAlive(t *testing.T) {
	w := &syncRecorder{header: http.Header{}}
	s := Start(w)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Follow(ctx, s, 5*time.Millisecond, make(chan string), func(string) error { return nil })
	}()
	testutil.Eventually(t, 5*time.Second, "two flushed keep-alive comments", func() bool {
		return strings.HasPrefix(w.body(), ": keep-alive\n\n: keep-alive\n\n") && w.flushCount() >= 2
	})
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Follow did not return when its context ended")
	}
	if body := strings.ReplaceAll(w.body(), ": keep-alive\n\n", ""); body != "" {
		t.Errorf("besides keep-alives, the stream has %q", body)
	}
}

// syncRecorder is a ResponseWriter and Flusher that a test may read while
// a writer writes.
type syncRecorder struct {
	header  http.Header
	buf     testutil.SyncBuffer
	flushes atomic.Int64
}

func (r *syncRecorder) Header() http.Header         { return r.header }
func (r *syncRecorder) WriteHeader(int)             {}
func (r *syncRecorder) Write(p []byte) (int, error) { return r.buf.Write(p) }
func (r *syncRecorder) Flush()                      { r.flushes.Add(1) }
func (r *syncRecorder) body() string                { return r.buf.String() }
func (r *syncRecorder) flushCount() int             { return int(r.flushes.Load()) }

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.Buffer.Write(p)
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }
