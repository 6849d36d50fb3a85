package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/sse"
	"github.com/switchboardhq/switchboard/app/redact"
	"github.com/switchboardhq/switchboard/supervisor"
)

// DefaultLogLines is how many lines GET .../logs returns without n.
const DefaultLogLines = 100

// followBuffer is the event buffer of one log stream. Events beyond it are
// dropped by the supervisor rather than slowing it down.
const followBuffer = 256

// logs serves GET /api/v1/servers/{name}/logs: the last n lines (n=0: none),
// and with follow=1 a text/event-stream of those lines and every new one.
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	q := r.URL.Query()
	n := DefaultLogLines
	if v := q.Get("n"); v != "" {
		i, err := strconv.Atoi(v)
		if err != nil || i < 0 {
			writeError(w, http.StatusBadRequest, "invalid n "+quote(v)+": expected a number of lines (0 or more)")
			return
		}
		n = i
	}
	follow := false
	if v := q.Get("follow"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid follow "+quote(v)+": expected 1 or 0")
			return
		}
		follow = b
	}

	// Subscribe before the snapshot, so that no line falls between them.
	var events <-chan *supervisor.Event
	if follow {
		ch, cancel := s.sup.Subscribe(followBuffer)
		defer cancel()
		events = ch
	}
	_, inConfig := s.cfg.Current().Servers[name]
	ps, err := s.sup.Status(name)
	if err != nil {
		if !inConfig && errors.Is(err, supervisor.ErrUnknownServer) {
			writeErr(w, unknownServer(name))
			return
		}
		ps = supervisor.PoolStatus{} // in the config but not running (yet): no lines
	}
	lines := ps.Logs[max(0, len(ps.Logs)-n):]
	if len(ps.Logs) == 0 && n > 0 && s.history != nil {
		// Not running, or not since the daemon started: what the server
		// wrote before is in the history.
		lines = s.storedLogs(r, name, n)
	}
	redactValues := !s.cfg.Current().History.KeepSecretValues
	if !follow {
		writeJSON(w, http.StatusOK, redactLines(logLines(lines), redactValues))
		return
	}
	s.follow(w, r, name, ps.Logs, lines, events, redactValues)
}

// redactLines returns lines (never nil) with the credentials in their text
// replaced when redactValues is set: the supervisor keeps what servers
// wrote as they wrote it, and the API shows it as the history stores it
// (see config.History.KeepSecretValues).
func redactLines(lines []wire.LogLine, redactValues bool) []wire.LogLine {
	out := make([]wire.LogLine, len(lines))
	copy(out, lines)
	if redactValues {
		for i := range out {
			out[i].Text = redact.Values(out[i].Text)
		}
	}
	return out
}

// logLines are the supervisor's lines as the API shows them; never nil.
func logLines(lines []supervisor.LogLine) []wire.LogLine {
	out := make([]wire.LogLine, 0, len(lines))
	for _, l := range lines {
		out = append(out, wire.LogLine(l))
	}
	return out
}

// storedLogs returns the server's last n lines from the history; a failure
// to read them is logged and answered as no lines, since the live lines
// still follow.
func (s *Server) storedLogs(r *http.Request, name string, n int) []supervisor.LogLine {
	stored, err := s.history.Logs(r.Context(), name, time.Time{}, n)
	if err != nil {
		s.log.Warn("reading a server's logs from the history", "server", name, "err", err)
		return nil
	}
	lines := make([]supervisor.LogLine, 0, len(stored))
	for _, l := range stored {
		lines = append(lines, supervisor.LogLine{Time: l.Time, PID: l.PID, Stream: l.Stream, Text: l.Text})
	}
	return lines
}

// logKey identifies a line: the event of a line carries the very time value
// the line has.
type logKey struct {
	time         time.Time
	pid          int
	stream, text string
}

// follow streams lines, then every new line of the server from events,
// until the client goes away or the subscription ends.
//
// The subscription started before the snapshot (all) was taken, so events
// for lines already in the snapshot may come first; they are skipped.
func (s *Server) follow(w http.ResponseWriter, r *http.Request, name string, all, lines []supervisor.LogLine, events <-chan *supervisor.Event, redactValues bool) {
	seen := make(map[logKey]bool, len(all))
	for _, l := range all {
		seen[logKey{l.Time, l.PID, l.Stream, l.Text}] = true
	}

	stream := sse.Start(w)
	send := func(l supervisor.LogLine) error {
		if redactValues {
			l.Text = redact.Values(l.Text)
		}
		data, err := json.Marshal(wire.LogLine(l))
		if err != nil {
			return err
		}
		return stream.Event(sse.Event{Data: data})
	}
	for _, l := range lines {
		if send(l) != nil {
			return
		}
	}
	if stream.Flush() != nil {
		return
	}

	// A closed subscription: the supervisor is shutting down.
	sse.Follow(r.Context(), stream, s.keepAlive, events, func(ev *supervisor.Event) error {
		if ev.Kind != supervisor.EventLog || ev.Server != name {
			return nil
		}
		l := supervisor.LogLine{Time: ev.Time, PID: ev.PID, Stream: ev.Stream, Text: ev.Message}
		if k := (logKey{l.Time, l.PID, l.Stream, l.Text}); seen[k] {
			delete(seen, k)
			return nil
		}
		return send(l)
	})
}
