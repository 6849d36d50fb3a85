package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/events"
)

func withBus(bus *events.Bus) func(*api.Options) {
	return func(o *api.Options) { o.Events = bus }
}

// collect follows the event stream after since until n events arrived.
func collect(t *testing.T, c *client.Client, since uint64, types []string, n int) []wire.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var got []wire.Event
	done := errors.New("done")
	err := c.Events(ctx, since, types, func(ev wire.Event) error {
		got = append(got, ev)
		if len(got) == n {
			return done
		}
		return nil
	})
	if !errors.Is(err, done) {
		t.Fatalf("Events: %v (got %d events: %+v)", err, len(got), got)
	}
	return got
}

func TestEventsResumeAndFilter(t *testing.T) {
	bus := events.New(16)
	e := newEnv(t, withBus(bus))
	var ids []uint64
	for i, typ := range []string{events.TypeLog, events.TypeState, events.TypeSample, events.TypeLog} {
		id, err := bus.Publish(typ, map[string]int{"n": i})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}

	// Resuming after the first event gets the other three, in order, with
	// their ids, types and data.
	got := collect(t, e.client, ids[0], nil, 3)
	for i, ev := range got {
		want := ids[i+1]
		if ev.ID != want {
			t.Errorf("event %d id = %d, want %d", i, ev.ID, want)
		}
		var d map[string]int
		if err := json.Unmarshal(ev.Data, &d); err != nil || d["n"] != i+1 {
			t.Errorf("event %d data = %s", i, ev.Data)
		}
	}
	if got[0].Type != events.TypeState || got[1].Type != events.TypeSample {
		t.Errorf("types = %s, %s", got[0].Type, got[1].Type)
	}

	// types= narrows the feed.
	logs := collect(t, e.client, ids[0], []string{events.TypeLog}, 1)
	if logs[0].ID != ids[3] {
		t.Errorf("types=log got id %d, want %d", logs[0].ID, ids[3])
	}

	// An id from before the ring (or an earlier daemon) gets a reset first.
	reset := collect(t, e.client, ids[0]-1000, nil, 1)
	if reset[0].Type != wire.TypeReset || reset[0].ID != 0 {
		t.Errorf("first event after a lost id = %+v, want a reset", reset[0])
	}
}

// A browser reconnects with the Last-Event-ID header; a live event reaches a
// connected client at once.
func TestEventsLastEventIDAndLive(t *testing.T) {
	bus := events.New(16)
	e := newEnv(t, withBus(bus))
	first, _ := bus.Publish(events.TypeConfig, struct{}{})
	second, _ := bus.Publish(events.TypeConfig, struct{}{})

	resp := e.request(t, "GET", "/api/v1/events", "", map[string]string{"Last-Event-ID": itoa(first)})
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rd := bufio.NewReader(resp.Body)
	readUntil := func(prefix string) string {
		t.Helper()
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			if strings.HasPrefix(line, prefix) {
				return strings.TrimSpace(line)
			}
		}
	}
	if got := readUntil("id: "); got != "id: "+itoa(second) {
		t.Fatalf("resumed with %q, want id %d", got, second)
	}
	readUntil(": switchboard events") // the backlog is out; the stream is live
	live, _ := bus.Publish(events.TypeCall, map[string]string{"server": "fs"})
	if got := readUntil("id: "); got != "id: "+itoa(live) {
		t.Fatalf("live event %q, want id %d", got, live)
	}
	if got := readUntil("event: "); got != "event: call" {
		t.Fatalf("live event type %q", got)
	}
	if got := readUntil("data: "); got != `data: {"server":"fs"}` {
		t.Fatalf("live event data %q", got)
	}
}

func TestEventsBadRequests(t *testing.T) {
	e := newEnv(t, withBus(events.New(0)))
	for _, tt := range []struct{ path, header, want string }{
		{"/api/v1/events?since=abc", "", `invalid since "abc"`},
		{"/api/v1/events", "x", `invalid Last-Event-ID "x"`},
		{"/api/v1/events?types=call,nope", "", `unknown event type "nope"`},
	} {
		h := map[string]string{}
		if tt.header != "" {
			h["Last-Event-ID"] = tt.header
		}
		resp := e.request(t, "GET", tt.path, "", h)
		var er wire.ErrorResponse
		_ = json.NewDecoder(resp.Body).Decode(&er)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(er.Error, tt.want) {
			t.Errorf("%s: %d %q, want 400 %q", tt.path, resp.StatusCode, er.Error, tt.want)
		}
	}
	noBus := newEnv(t)
	resp := noBus.request(t, "GET", "/api/v1/events", "", nil)
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("without a bus: %d, want 503", resp.StatusCode)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
