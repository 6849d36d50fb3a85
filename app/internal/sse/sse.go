// Package sse writes server-sent events (the text/event-stream format of
// the HTML standard): the headers that open a stream, events with an id, a
// type and data, comments (a keep-alive, or a first line that shows the
// stream is open), flushes, and Follow, the loop that writes what a channel
// brings with keep-alive comments between. The daemon's event feed and log streams
// (app/api) and the gateway's keep-alive comments all write through it, so
// the bytes on the wire are made in one place.
package sse

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// An Event is one server-sent event. ID and Type are left out when empty;
// Data is sent as one "data:" line per line it holds (none holds a newline
// in JSON, so a JSON value is one line).
type Event struct {
	ID   string
	Type string
	Data []byte
}

// WriteEvent writes e to w in one Write. An ID or Type holding a line break
// is an error: it would end the field early.
func WriteEvent(w io.Writer, e Event) error {
	if strings.ContainsAny(e.ID, "\r\n") {
		return fmt.Errorf("server-sent event id %q holds a line break", e.ID)
	}
	if strings.ContainsAny(e.Type, "\r\n") {
		return fmt.Errorf("server-sent event type %q holds a line break", e.Type)
	}
	buf := make([]byte, 0, len(e.ID)+len(e.Type)+len(e.Data)+24)
	if e.ID != "" {
		buf = append(append(append(buf, "id: "...), e.ID...), '\n')
	}
	if e.Type != "" {
		buf = append(append(append(buf, "event: "...), e.Type...), '\n')
	}
	buf = appendLines(buf, "data: ", e.Data)
	buf = append(buf, '\n')
	_, err := w.Write(buf)
	return err
}

// WriteComment writes text to w as a comment, which clients ignore: one
// ": " line per line of text, then the blank line that ends it.
func WriteComment(w io.Writer, text string) error {
	buf := appendLines(make([]byte, 0, len(text)+4), ": ", []byte(text))
	_, err := w.Write(append(buf, '\n'))
	return err
}

// appendLines appends each line of data (split at "\n", "\r\n" or "\r")
// to buf after prefix, each ended by "\n"; empty data is one empty line.
func appendLines(buf []byte, prefix string, data []byte) []byte {
	for {
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			return append(append(append(buf, prefix...), data...), '\n')
		}
		buf = append(append(append(buf, prefix...), data[:i]...), '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

// A Stream is an open event stream on an HTTP response.
type Stream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// Start answers 200 with the headers of an event stream (not cached, not
// sniffed, not buffered by a proxy) and returns the stream. Nothing is
// flushed yet.
func Start(w http.ResponseWriter) *Stream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Accel-Buffering", "no") // no proxy buffering
	w.WriteHeader(http.StatusOK)
	return &Stream{w: w, rc: http.NewResponseController(w)}
}

// Event writes e (see WriteEvent); Flush sends it.
func (s *Stream) Event(e Event) error { return WriteEvent(s.w, e) }

// Comment writes a comment (see WriteComment); Flush sends it.
func (s *Stream) Comment(text string) error { return WriteComment(s.w, text) }

// Flush sends what was written to the client.
func (s *Stream) Flush() error { return s.rc.Flush() }

// Follow writes to s what c brings, until ctx ends (the client went away),
// c is closed, or writing fails: write turns one value into events (or
// nothing, for a value the client did not ask for), and what it wrote is
// flushed. Every keepAlive, a ": keep-alive" comment is written and
// flushed, so that proxies and clients with idle timeouts keep the stream.
func Follow[T any](ctx context.Context, s *Stream, keepAlive time.Duration, c <-chan T, write func(T) error) {
	ticker := time.NewTicker(keepAlive)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case v, ok := <-c:
			if !ok || write(v) != nil || s.Flush() != nil {
				return
			}
		case <-ticker.C:
			if s.Comment("keep-alive") != nil || s.Flush() != nil {
				return
			}
		}
	}
}
