package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor"
)

func texts(lines []wire.LogLine) []string {
	out := []string{}
	for _, l := range lines {
		out = append(out, l.Text)
	}
	return out
}

func TestLogs(t *testing.T) {
	e := newEnv(t)
	e.cfg.cfg.Servers["idle"] = config.Server{Command: "x"} // in the config, not (yet) in the supervisor
	for i := range 3 {
		e.sup.logLine("fs", fmt.Sprintf("line %d", i))
	}
	tests := []struct {
		name       string
		server     string
		n          int
		want       []string
		wantStatus int
		wantError  string
	}{
		{name: "last 2", server: "fs", n: 2, want: []string{"line 1", "line 2"}},
		{name: "default", server: "fs", n: -1, want: []string{"first line", "second line", "line 0", "line 1", "line 2"}},
		{name: "more than kept", server: "fs", n: 1000, want: []string{"first line", "second line", "line 0", "line 1", "line 2"}},
		{name: "none", server: "fs", n: 0, want: []string{}},
		{name: "disabled server", server: "off", n: 10, want: []string{}},
		{name: "not running yet", server: "idle", n: 10, want: []string{}},
		{name: "unknown", server: "nope", n: 10, wantStatus: 404, wantError: `unknown server "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, err := e.client.Logs(t.Context(), tt.server, tt.n)
			if tt.wantStatus != 0 {
				wantAPIError(t, err, tt.wantStatus, tt.wantError)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := texts(lines); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("lines = %q, want %q", got, tt.want)
			}
		})
	}

	for _, q := range []string{"n=abc", "n=-1", "follow=maybe"} {
		resp := e.request(t, "GET", "/api/v1/servers/fs/logs?"+q, "", nil)
		var er wire.ErrorResponse
		_ = json.NewDecoder(resp.Body).Decode(&er)
		if resp.StatusCode != 400 || !strings.Contains(er.Error, "invalid") {
			t.Errorf("?%s: %d %q, want 400", q, resp.StatusCode, er.Error)
		}
	}
}

// TestFollowLogs: the stream sends the recent lines, then a line published
// after the client connected (once, though the subscription also saw the
// recent lines), and ends with no goroutine or subscription left when the
// client cancels.
func TestFollowLogs(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan wire.LogLine, 16)
	done := make(chan error, 1)
	go func() {
		done <- e.client.FollowLogs(ctx, "fs", 1, func(l wire.LogLine) { got <- l })
	}()

	next := func(what string) wire.LogLine {
		t.Helper()
		select {
		case l := <-got:
			return l
		case err := <-done:
			t.Fatalf("FollowLogs ended waiting for %s: %v", what, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("timed out waiting for %s", what)
		}
		panic("unreachable")
	}
	if l := next("the recent line"); l.Text != "second line" {
		t.Fatalf("first line = %+v, want the last recent one", l)
	}
	// The handler subscribed before it sent the recent lines.
	if n := e.sup.subscribers(); n != 1 {
		t.Fatalf("%d subscribers, want 1", n)
	}

	// An event for a line already sent (the subscription saw it too), other
	// servers' lines and other kinds of events are not sent.
	e.sup.mu.Lock()
	recent := e.sup.pools["fs"].Logs[1]
	e.sup.mu.Unlock()
	e.sup.publish(supervisor.Event{Time: recent.Time, Server: "fs", Kind: supervisor.EventLog, PID: recent.PID, Stream: recent.Stream, Message: recent.Text})
	e.sup.publish(supervisor.Event{Time: time.Now(), Server: "other", Kind: supervisor.EventLog, PID: 1, Stream: "stderr", Message: "not mine"})
	e.sup.publish(supervisor.Event{Time: time.Now(), Server: "fs", Kind: supervisor.EventState, State: supervisor.StateRunning})
	sent := e.sup.logLine("fs", "new line")
	l := next("the new line")
	if l.Text != "new line" || l.PID != sent.PID || l.Stream != "stderr" || !l.Time.Equal(sent.Time) {
		t.Fatalf("streamed %+v, want %+v", l, sent)
	}
	e.sup.logLine("fs", "another")
	if l := next("another line"); l.Text != "another" {
		t.Fatalf("streamed %+v", l)
	}

	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("FollowLogs = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("FollowLogs did not return after cancel")
	}
	testutil.Eventually(t, 10*time.Second, "the handler to unsubscribe", func() bool { return e.sup.subscribers() == 0 })
	select {
	case l := <-got:
		t.Errorf("unexpected line %+v", l)
	default:
	}
}

// TestFollowRaw checks the wire format: text/event-stream, data lines, and
// keep-alive comments while nothing happens.
func TestFollowRaw(t *testing.T) {
	e := newEnv(t, func(o *api.Options) { o.KeepAlive = 20 * time.Millisecond })
	resp := e.request(t, "GET", "/api/v1/servers/fs/logs?follow=1&n=5", "", map[string]string{"Accept": "text/event-stream"})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if sc.Text() == ": keep-alive" {
			break
		}
	}
	if len(lines) < 5 {
		t.Fatalf("stream = %q", lines)
	}
	for i, want := range []string{`data: {"time":`, "", `data: {"time":`, "", ": keep-alive"} {
		if !strings.HasPrefix(lines[i], want) || (want == "" && lines[i] != "") {
			t.Fatalf("line %d = %q, want prefix %q (stream %q)", i, lines[i], want, lines)
		}
	}
	var l wire.LogLine
	if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[2], "data: ")), &l); err != nil || l.Text != "second line" {
		t.Fatalf("event %q: %+v, %v", lines[2], l, err)
	}
	resp.Body.Close()
	testutil.Eventually(t, 10*time.Second, "the handler to unsubscribe", func() bool { return e.sup.subscribers() == 0 })
}

func TestFollowErrors(t *testing.T) {
	e := newEnv(t)
	err := e.client.FollowLogs(t.Context(), "nope", 10, func(wire.LogLine) { t.Error("line for an unknown server") })
	wantAPIError(t, err, 404, `unknown server "nope"`)
	if n := e.sup.subscribers(); n != 0 {
		t.Errorf("%d subscribers left", n)
	}
}

// TestLiveLogsRedacted: what servers wrote is shown as the history stores
// it, credentials replaced, in GET .../logs, a server's recent lines and
// the followed stream; unless value redaction is off.
func TestLiveLogsRedacted(t *testing.T) {
	const secret = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	e := newEnv(t)
	e.sup.logLine("fs", "using "+secret)
	lines, err := e.client.Logs(t.Context(), "fs", 1)
	if err != nil || len(lines) != 1 || lines[0].Text != "using [redacted]" {
		t.Errorf("logs = %+v, %v", lines, err)
	}
	v, err := e.client.Server(t.Context(), "fs")
	if err != nil || v.RecentLogs[len(v.RecentLogs)-1].Text != "using [redacted]" {
		t.Errorf("recent logs = %+v, %v", v.RecentLogs, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan wire.LogLine, 4)
	go e.client.FollowLogs(ctx, "fs", 1, func(l wire.LogLine) { got <- l })
	select {
	case l := <-got:
		if l.Text != "using [redacted]" {
			t.Errorf("followed line = %q", l.Text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no followed line")
	}

	e.cfg.mu.Lock()
	e.cfg.cfg.History.KeepSecretValues = true
	e.cfg.mu.Unlock()
	if lines, _ := e.client.Logs(t.Context(), "fs", 1); len(lines) != 1 || lines[0].Text != "using "+secret {
		t.Errorf("with value redaction off, logs = %+v", lines)
	}
}
