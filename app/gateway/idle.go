package gateway

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSessionTimeout closes a client session that sent no request for
// this long, when the settings say nothing.
const DefaultSessionTimeout = 30 * time.Minute

// idleSessions closes session-era client sessions that sent no request for
// the session timeout (the go-sdk's own timeout is fixed when its handler is
// made; this one follows SetSessionTimeout). As with the go-sdk's, only
// POSTs count: a session whose client only holds its GET stream open is idle.
type idleSessions struct {
	timeout atomic.Int64 // nanoseconds
	// close ends the session with this id, wherever it is served.
	close func(id string)

	mu       sync.Mutex
	sessions map[string]*idleSession
	closed   bool
	clock    uint64 // counts requests' begins and ends: the order of use
}

type idleSession struct {
	refs  int // requests in progress
	timer *time.Timer
	used  uint64 // the clock at its last request's begin or end
}

func (s *idleSessions) init(timeout time.Duration, close func(string)) {
	s.sessions = map[string]*idleSession{}
	s.close = close
	s.set(timeout)
}

func (s *idleSessions) set(d time.Duration) {
	if d <= 0 {
		d = DefaultSessionTimeout
	}
	if time.Duration(s.timeout.Swap(int64(d))) == d {
		return
	}
	// Sessions idle now get the new timeout, counted from the change.
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, is := range s.sessions {
		if is.refs == 0 && is.timer != nil {
			is.timer.Reset(d)
		}
	}
}

// serve runs next for r, counting it as activity of its session, and starts
// the clock of a session that r opened.
func (s *idleSessions) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if r.Method != http.MethodPost {
		next.ServeHTTP(w, r)
		if r.Method == http.MethodDelete && id != "" {
			s.forget(id)
		}
		return
	}
	if id != "" {
		s.begin(id, false)
		defer s.end(id)
		next.ServeHTTP(w, r)
		return
	}
	// The session this request opens is counted before its id leaves: the
	// client may send its next request before this handler returns, and
	// that request's end must not find the session untracked at its begin
	// and tracked at its end (its count went below zero, so the session
	// kept its old timeout and its clock ran during its later requests).
	opened := ""
	next.ServeHTTP(&sessionIDCatcher{ResponseWriter: w, opened: func(id string) {
		opened = id
		s.begin(id, true)
	}}, r)
	if opened == "" { // the answer left without a write of ours (none)
		if opened = w.Header().Get("Mcp-Session-Id"); opened != "" {
			s.begin(opened, true)
		}
	}
	if opened != "" {
		s.end(opened)
	}
}

// begin counts a request of session id; only a session this gateway opened
// is tracked (open), so ids made up by a client cost nothing.
func (s *idleSessions) begin(id string, open bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	is := s.sessions[id]
	if is == nil {
		if !open {
			return
		}
		is = &idleSession{}
		s.sessions[id] = is
	}
	if is.refs == 0 && is.timer != nil {
		is.timer.Stop()
	}
	is.refs++
	s.clock++
	is.used = s.clock
}

func (s *idleSessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	is := s.sessions[id]
	if is == nil || s.closed {
		return
	}
	s.clock++
	is.used = s.clock
	if is.refs--; is.refs > 0 {
		return
	}
	timeout := time.Duration(s.timeout.Load())
	if is.timer == nil {
		is.timer = time.AfterFunc(timeout, func() { s.expire(id, is) })
	} else {
		is.timer.Reset(timeout)
	}
}

// expire closes the session id if it is still idle.
func (s *idleSessions) expire(id string, is *idleSession) {
	s.mu.Lock()
	if s.sessions[id] != is || is.refs > 0 {
		s.mu.Unlock()
		return
	}
	delete(s.sessions, id)
	s.mu.Unlock()
	s.close(id)
}

// takeLeastRecent stops tracking, and returns, the session of ids with no
// request in progress that was used least recently; ok is false when each
// has a request in progress (or is not tracked: still opening, or ended).
// The caller ends it, as expire's caller does.
func (s *idleSessions) takeLeastRecent(ids []string) (id string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest *idleSession
	for _, candidate := range ids {
		is := s.sessions[candidate]
		if is == nil || is.refs > 0 || (oldest != nil && is.used >= oldest.used) {
			continue
		}
		id, oldest = candidate, is
	}
	if oldest == nil {
		return "", false
	}
	if oldest.timer != nil {
		oldest.timer.Stop()
	}
	delete(s.sessions, id)
	return id, true
}

func (s *idleSessions) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.sessions[id]; is != nil {
		if is.timer != nil {
			is.timer.Stop()
		}
		delete(s.sessions, id)
	}
}

// stop stops every clock (the gateway is closing).
func (s *idleSessions) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, is := range s.sessions {
		if is.timer != nil {
			is.timer.Stop()
		}
		delete(s.sessions, id)
	}
}

// closeSession ends the client session id on whichever endpoint serves it
// (it idled out, or was evicted): its next request gets 404.
func (g *Gateway) closeSession(id string) {
	g.guard.forget(id)
	g.endSession(id) // first: the go-sdk's Close waits for the calls
	for _, s := range g.fronts() {
		for ss := range s.Sessions() {
			if ss.ID() == id {
				g.log.Debug("closing a client session", "session", id)
				_ = ss.Close()
				return
			}
		}
	}
}

// SetSessionTimeout changes how long a client session may send no request
// before it is closed (and its session-mode processes released); 0 means
// DefaultSessionTimeout. Sessions idle at the change get the new timeout
// counted from the change.
func (g *Gateway) SetSessionTimeout(d time.Duration) { g.idle.set(d) }
