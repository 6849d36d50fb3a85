package sse

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
