package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/events"
	"github.com/switchboardhq/switchboard/app/internal/sse"
)

// eventTypes are the types a client may ask for with ?types=.
var eventTypes = []string{events.TypeCall, events.TypeCallStart, events.TypeCallProgress, events.TypeLog, events.TypeState, events.TypeSample,
	events.TypeInstall, events.TypeConfig, events.TypeTools, events.TypeDropped, events.TypeApproval, events.TypeAuth, events.TypeAsk}

// events serves GET /api/v1/events: the daemon's live feed as server-sent
// events, each with its id and type. A client resumes with the
// Last-Event-ID header (browsers send it when they reconnect) or ?since=ID,
// and may narrow the feed with ?types=call,state.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if _, err := available(s.bus, "the event stream is"); err != nil {
		writeErr(w, err)
		return
	}
	since, err := sinceParam(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	want, err := typesParam(r.URL.Query().Get("types"))
	if err != nil {
		writeErr(w, err)
		return
	}
	sub := s.bus.Subscribe(since, 0)
	defer sub.Close()

	stream := sse.Start(w)
	send := func(ev events.Event) error {
		if want != nil && !want[ev.Type] {
			return nil
		}
		return stream.Event(sse.Event{ID: strconv.FormatUint(ev.ID, 10), Type: ev.Type, Data: ev.Data})
	}
	if sub.Reset {
		if stream.Event(sse.Event{Type: wire.TypeReset, Data: []byte("{}")}) != nil {
			return
		}
	}
	for _, ev := range sub.Backlog {
		if send(ev) != nil {
			return
		}
	}
	// Flushing now also tells the client the stream is open.
	if stream.Comment("switchboard events") != nil || stream.Flush() != nil {
		return
	}

	// A closed subscription was cut off for falling behind, or the daemon
	// is stopping: the client reconnects with its last id and catches up.
	sse.Follow(r.Context(), stream, s.keepAlive, sub.C(), func(ev events.Event) error {
		if err := send(ev); err != nil {
			return err
		}
		// Send what else is waiting in one write.
		for {
			select {
			case ev, ok := <-sub.C():
				if !ok {
					return nil
				}
				if err := send(ev); err != nil {
					return err
				}
			default:
				return nil
			}
		}
	})
}

// sinceParam reads the id to resume after: the Last-Event-ID header, else
// ?since, else 0 (only new events).
func sinceParam(r *http.Request) (uint64, error) {
	v, name := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, name = r.URL.Query().Get("since"), "since"
	}
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, errorf(http.StatusBadRequest, "invalid %s %q: expected an event id", name, v)
	}
	return id, nil
}

// typesParam parses ?types=a,b; nil means every type.
func typesParam(v string) (map[string]bool, error) {
	if v == "" {
		return nil, nil
	}
	want := map[string]bool{}
	for t := range strings.SplitSeq(v, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(eventTypes, t) {
			return nil, errorf(http.StatusBadRequest, "unknown event type %q in types: expected some of %s",
				t, strings.Join(eventTypes, ", "))
		}
		want[t] = true
	}
	return want, nil
}
