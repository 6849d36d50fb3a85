package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/history"
)

// History is what the API needs of the call history (history.Store).
type History interface {
	Calls(ctx context.Context, q history.CallQuery) (history.CallPage, error)
	Call(ctx context.Context, id int64) (history.Call, error)
	Stats(ctx context.Context, since, until time.Time, groupBy string) ([]history.Stat, error)
	Timeline(ctx context.Context, server string, since, until time.Time, step time.Duration) ([]history.TimeStat, error)
	Samples(ctx context.Context, server string, since, until time.Time) ([]history.Sample, error)
	Export(ctx context.Context, q history.CallQuery, w io.Writer, format string) error
	Logs(ctx context.Context, server string, since time.Time, limit int) ([]history.LogLine, error)
	Events(ctx context.Context, server string, since time.Time, limit int) ([]history.Event, error)
	Dropped() uint64
}

// DefaultStatsWindow is the window of /api/v1/stats without "since".
const DefaultStatsWindow = 24 * time.Hour

func (s *Server) historyRoutes() {
	s.mux.Handle("GET /api/v1/history", handle(s.listHistory, http.StatusOK))
	s.mux.HandleFunc("GET /api/v1/history/export", s.exportHistory)
	s.mux.Handle("GET /api/v1/history/{id}", handle(s.getCall, http.StatusOK))
	s.mux.Handle("GET /api/v1/stats", handle(s.stats, http.StatusOK))
	s.mux.Handle("GET /api/v1/usage", handle(s.usage, http.StatusOK))
	s.mux.Handle("GET /api/v1/lifecycle", handle(s.lifecycle, http.StatusOK))
}

func (s *Server) historyStore() (History, error) {
	return available(s.history, "call history is")
}

// callQuery reads a CallQuery from the URL: server, tool, client, outcome,
// since, until (RFC 3339 times or durations back from now: "1h"), q (free
// text), cursor, limit.
func callQuery(v url.Values, now time.Time) (history.CallQuery, error) {
	q := history.CallQuery{Server: v.Get("server"), Tool: v.Get("tool"), Client: v.Get("client"),
		Outcome: v.Get("outcome"), Text: v.Get("q"), Cursor: v.Get("cursor")}
	var err error
	if q.Since, err = timeParam(v, "since", now); err != nil {
		return q, err
	}
	if q.Until, err = timeParam(v, "until", now); err != nil {
		return q, err
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 1000 {
			return q, errorf(http.StatusBadRequest, "invalid limit %q: a number from 1 to 1000", l)
		}
		q.Limit = n
	}
	return q, nil
}

// timeParam reads a time given as RFC 3339 or as a duration before now.
func timeParam(v url.Values, name string, now time.Time) (time.Time, error) {
	raw := v.Get(name)
	if raw == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(raw); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return time.Time{}, errorf(http.StatusBadRequest, "invalid %s %q: an RFC 3339 time (2026-11-30T10:00:00Z) or a duration back from now (90m, 24h)", name, raw)
	}
	return t, nil
}

func (s *Server) listHistory(r *http.Request) (wire.CallPage, error) {
	h, err := s.historyStore()
	if err != nil {
		return wire.CallPage{}, err
	}
	q, err := callQuery(r.URL.Query(), time.Now())
	if err != nil {
		return wire.CallPage{}, err
	}
	page, err := h.Calls(r.Context(), q)
	if errors.Is(err, history.ErrBadCursor) {
		return wire.CallPage{}, errorf(http.StatusBadRequest, "invalid cursor: use the \"next\" of a previous page")
	}
	return wire.CallPage{Calls: convertAll(page.Calls, wireCall), Next: page.Next}, err
}

func (s *Server) getCall(r *http.Request) (wire.Call, error) {
	h, err := s.historyStore()
	if err != nil {
		return wire.Call{}, err
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return wire.Call{}, errorf(http.StatusBadRequest, "invalid call id %q", r.PathValue("id"))
	}
	c, err := h.Call(r.Context(), id)
	if errors.Is(err, history.ErrNotFound) {
		return wire.Call{}, errorf(http.StatusNotFound, "no call %d in the history", id)
	}
	return wireCall(c), err
}

// wireCall is c as the API answers it: every field copied
// (TestWireCallCopiesEveryField).
func wireCall(c history.Call) wire.Call {
	return wire.Call{ID: c.ID, Start: c.Start, Duration: c.Duration, ClientLabel: c.ClientLabel, ClientName: c.ClientName,
		ClientVersion: c.ClientVersion, Session: c.Session, Endpoint: c.Endpoint, Server: c.Server, Method: c.Method,
		Name: c.Name, Arguments: c.Arguments, Outcome: c.Outcome, Error: c.Error, ResponseSize: c.ResponseSize,
		ResponsePreview: c.ResponsePreview, PID: c.PID, Tier: c.Tier, Tool: c.Tool, Unknown: c.Unknown,
		DecidedBy: c.DecidedBy, DecisionAllowed: c.DecisionAllowed, DecidedAt: c.DecidedAt}
}

// convertAll converts each element of in with fn; nil stays nil, and an
// empty slice stays empty (the JSON tells null from []).
func convertAll[In, Out any](in []In, fn func(In) Out) []Out {
	if in == nil {
		return nil
	}
	out := make([]Out, 0, len(in))
	for _, v := range in {
		out = append(out, fn(v))
	}
	return out
}

func (s *Server) exportHistory(w http.ResponseWriter, r *http.Request) {
	h, err := s.historyStore()
	if err != nil {
		writeErr(w, err)
		return
	}
	q, err := callQuery(r.URL.Query(), time.Now())
	if err != nil {
		writeErr(w, err)
		return
	}
	format := r.URL.Query().Get("format")
	switch format {
	case "", "jsonl":
		format = "jsonl"
		w.Header().Set("Content-Type", "application/x-ndjson")
	case "csv":
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	default:
		writeErr(w, errorf(http.StatusBadRequest, "invalid format %q: jsonl or csv", format))
		return
	}
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="switchboard-history.%s"`, format))
	if err := h.Export(r.Context(), q, w, format); err != nil {
		// Headers are gone; the best is to end the body early.
		s.log.Warn("exporting history", "err", err)
	}
}

// window reads since and until from the URL; a missing since means
// defaultSpan before now.
func window(v url.Values, defaultSpan time.Duration) (since, until time.Time, err error) {
	now := time.Now()
	if since, err = timeParam(v, "since", now); err != nil {
		return since, until, err
	}
	if since.IsZero() {
		since = now.Add(-defaultSpan)
	}
	until, err = timeParam(v, "until", now)
	return since, until, err
}

// stats answers GET /api/v1/stats: by=server or by=tool, one Stat per
// group; by=time, a timeline of the window in buckets of step (default: the
// window / 60 rounded up to a whole second), optionally of one server.
func (s *Server) stats(r *http.Request) (any, error) {
	h, err := s.historyStore()
	if err != nil {
		return nil, err
	}
	v := r.URL.Query()
	since, until, err := window(v, DefaultStatsWindow)
	if err != nil {
		return nil, err
	}
	by := v.Get("by")
	switch by {
	case "", "server", "tool":
		stats, err := h.Stats(r.Context(), since, until, by)
		return convertAll(stats, func(st history.Stat) wire.Stat { return wire.Stat(st) }), err
	case "time":
	default:
		return nil, errorf(http.StatusBadRequest, "invalid by %q: server, tool or time", by)
	}
	if until.IsZero() {
		until = time.Now()
	}
	if !until.After(since) {
		return nil, errorf(http.StatusBadRequest, "invalid window: until (%s) is not after since (%s)", until.Format(time.RFC3339), since.Format(time.RFC3339))
	}
	step := (until.Sub(since)/60 + time.Second - 1).Truncate(time.Second)
	if raw := v.Get("step"); raw != "" {
		if step, err = time.ParseDuration(raw); err != nil || step < time.Second {
			return nil, errorf(http.StatusBadRequest, "invalid step %q: a duration of at least 1s (30s, 15m, 2h)", raw)
		}
	}
	if n := until.Sub(since)/step + 1; n > history.MaxTimeBuckets {
		return nil, errorf(http.StatusBadRequest, "step %s makes %d buckets over the window: at most %d, use a longer step", step, n, history.MaxTimeBuckets)
	}
	timeline, err := h.Timeline(r.Context(), v.Get("server"), since, until, step)
	return convertAll(timeline, func(ts history.TimeStat) wire.TimeStat { return wire.TimeStat(ts) }), err
}

// DefaultUsageWindow is the window of /api/v1/usage without "since".
const DefaultUsageWindow = time.Hour

// lifecycle answers GET /api/v1/lifecycle: the recorded lifecycle events
// (starts, exits, crashes, config changes, installs, client configs
// written), oldest first. Parameters: server, since (default: all kept),
// limit (default 200, at most 10000).
func (s *Server) lifecycle(r *http.Request) ([]wire.LifecycleEvent, error) {
	h, err := s.historyStore()
	if err != nil {
		return nil, err
	}
	v := r.URL.Query()
	since, err := timeParam(v, "since", time.Now())
	if err != nil {
		return nil, err
	}
	limit := 0
	if l := v.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > 10000 {
			return nil, errorf(http.StatusBadRequest, "invalid limit %q: a number from 1 to 10000", l)
		}
	}
	evs, err := h.Events(r.Context(), v.Get("server"), since, limit)
	return convertAll(evs, func(e history.Event) wire.LifecycleEvent {
		return wire.LifecycleEvent{ID: e.ID, Time: e.Time, Server: e.Server, Kind: string(e.Kind), PID: e.PID,
			Exit: e.Exit, Message: e.Message, State: e.State}
	}), err
}

func (s *Server) usage(r *http.Request) ([]wire.Sample, error) {
	h, err := s.historyStore()
	if err != nil {
		return nil, err
	}
	v := r.URL.Query()
	since, until, err := window(v, DefaultUsageWindow)
	if err != nil {
		return nil, err
	}
	samples, err := h.Samples(r.Context(), v.Get("server"), since, until)
	return convertAll(samples, func(sm history.Sample) wire.Sample { return wire.Sample(sm) }), err
}
