package tray

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/app/api"
)

// An Event is one message of the daemon's /api/v1/events stream.
type Event struct {
	ID   string
	Type string
	Data json.RawMessage
}

// InstallEvent is the data of an "install" event.
type InstallEvent struct {
	ID     string `json:"id"`
	Server string `json:"server"`
	Phase  string `json:"phase"`
	Done   bool   `json:"done"`
	Error  string `json:"error"`
	// Tools is the verified tool list (its shape is the installer's).
	Tools json.RawMessage `json:"tools"`
}

// StateEvent is the data of a "state" event.
type StateEvent struct {
	Server  string `json:"server"`
	Kind    string `json:"kind"`
	State   string `json:"state"`
	Message string `json:"message"`
}

// errNoEvents is returned by followEvents when the daemon has no event
// stream (an older daemon: 404, or one without a bus: 503).
var errNoEvents = errors.New("the daemon has no event stream")

// followedTypes are the events the tray redraws on; log lines it ignores.
const followedTypes = "state,config,install,call,sample,dropped"

// followEvents reads the daemon's event stream, calling fn for each event,
// until ctx ends or the stream breaks. lastID resumes after that event
// (the stream's Last-Event-ID); it returns the last id seen.
func followEvents(ctx context.Context, c *api.Client, lastID string, fn func(Event)) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		strings.TrimRight(c.BaseURL, "/")+"/api/v1/events?types="+followedTypes, nil)
	if err != nil {
		return lastID, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return lastID, fmt.Errorf("following the daemon's events: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusServiceUnavailable:
		return lastID, errNoEvents
	case resp.StatusCode >= 400:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return lastID, fmt.Errorf("following the daemon's events: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		return lastID, fmt.Errorf("following the daemon's events: the daemon answered %q, not an event stream", ct)
	}
	err = parseEvents(resp.Body, func(ev Event) {
		if ev.ID != "" {
			lastID = ev.ID
		}
		fn(ev)
	})
	if ctx.Err() != nil {
		return lastID, ctx.Err()
	}
	if err != nil {
		return lastID, fmt.Errorf("following the daemon's events: %w", err)
	}
	return lastID, fmt.Errorf("following the daemon's events: %w", io.ErrUnexpectedEOF)
}

// parseEvents reads server-sent events from r
// (https://html.spec.whatwg.org/multipage/server-sent-events.html) until it
// ends. An event without a type is a "message".
func parseEvents(r io.Reader, fn func(Event)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var ev Event
	var data []byte
	hasData := false // the spec dispatches only events with data
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if hasData {
				if ev.Type == "" {
					ev.Type = "message"
				}
				ev.Data = json.RawMessage(bytes.Clone(data))
				fn(ev)
			}
			ev, data, hasData = Event{}, data[:0], false
			continue
		}
		if line[0] == ':' {
			continue // a comment: keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data, hasData = append(data, value...), true
		case "event":
			ev.Type = string(value)
		case "id":
			ev.ID = string(value)
		}
	}
	return sc.Err()
}
