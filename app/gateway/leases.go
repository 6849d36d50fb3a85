// Session leases: in session mode a client session keeps the process it
// first leased of a server until the session ends or goes idle.

package gateway

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/supervisor"
)

// sessionLeases holds the processes leased to client sessions of
// session-mode servers. A session's first call to a server leases a process
// (one acquisition per session and server, however many calls arrive at
// once: in session mode releasing a process stops it, so a second lease
// would cost a process and its state); the session keeps it until the
// session ends or it stays idle for the server's idle timeout.
type sessionLeases struct {
	mu       sync.Mutex
	sessions map[*mcp.ServerSession]map[string]*sessionLease
	closed   bool // the gateway is closing: no new leases are kept
	// track runs a session's releaser as part of the gateway's lifetime
	// (Close waits for it).
	track func(func())
}

// A sessionLease is the process of one server leased to one client session.
type sessionLease struct {
	ready chan struct{} // closed once the acquisition ended
	lease Lease         // set before ready closes; nil when it failed
	err   error         // why it failed
	inUse int           // calls running on it
	idle  *time.Timer   // releases it once idle for the server's idle timeout
}

func (s *sessionLeases) init(track func(func())) {
	s.sessions = map[*mcp.ServerSession]map[string]*sessionLease{}
	s.track = track
}

// get returns the process of server leased to ss, leasing one if it has
// none (or its process ended), and a function to call when the call is done.
func (s *sessionLeases) get(ctx context.Context, backends Backends, ss *mcp.ServerSession, server string, idle time.Duration) (Lease, func(), error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, nil, supervisor.ErrClosed
		}
		leases := s.sessions[ss]
		if leases == nil {
			leases = map[string]*sessionLease{}
			s.sessions[ss] = leases
			// Tracked under mu: Close sets closed first, so no releaser
			// starts after Close began waiting for them.
			s.track(func() {
				ss.Wait()
				s.release(ss)
			})
		}
		sl := leases[server]
		var dead Lease
		if sl != nil {
			select {
			case <-sl.ready:
				if sl.lease.Err() == nil {
					sl.inUse++
					if sl.idle != nil {
						sl.idle.Stop()
					}
					s.mu.Unlock()
					return sl.lease, s.doneFunc(ss, server, sl, idle), nil
				}
				// Its process ended: lease another.
				delete(leases, server)
				dead = sl.lease
			default:
				// Another call of this session is acquiring: wait for it.
				s.mu.Unlock()
				select {
				case <-sl.ready:
					if sl.err != nil && !(ctx.Err() == nil && isContextErr(sl.err)) {
						return nil, nil, sl.err
					}
					// Acquired, or the acquiring call was cancelled or
					// timed out, which ends that call, not this one:
					// look again (and acquire, if it must).
					continue
				case <-ctx.Done():
					return nil, nil, context.Cause(ctx)
				}
			}
		}
		sl = &sessionLease{ready: make(chan struct{}), inUse: 1}
		leases[server] = sl
		s.mu.Unlock()
		if dead != nil {
			dead.Release()
		}

		l, err := backends.Acquire(ctx, server)
		s.mu.Lock()
		kept := s.sessions[ss][server] == sl
		if err != nil {
			if kept {
				delete(s.sessions[ss], server)
			}
			sl.err = err
			close(sl.ready)
			s.mu.Unlock()
			return nil, nil, err
		}
		sl.lease = l
		close(sl.ready)
		s.mu.Unlock()
		if !kept {
			// The session ended (or the gateway closed) meanwhile: the
			// process serves this call only.
			return l, l.Release, nil
		}
		return l, s.doneFunc(ss, server, sl, idle), nil
	}
}

// isContextErr reports whether err is a cancellation or a deadline.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// doneFunc returns what ends one call on sl: when no call of the session
// uses the process any more, its idle timer starts.
func (s *sessionLeases) doneFunc(ss *mcp.ServerSession, server string, sl *sessionLease, idle time.Duration) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			sl.inUse--
			if sl.inUse > 0 || idle <= 0 || s.sessions[ss][server] != sl {
				return
			}
			if sl.idle == nil {
				sl.idle = time.AfterFunc(idle, func() { s.expire(ss, server, sl) })
			} else {
				sl.idle.Reset(idle)
			}
		})
	}
}

// expire releases sl, idle for the server's idle timeout: a session that
// went quiet (or was abandoned without DELETE) gives its process back. Its
// next call leases a process again.
func (s *sessionLeases) expire(ss *mcp.ServerSession, server string, sl *sessionLease) {
	s.mu.Lock()
	if s.sessions[ss][server] != sl || sl.inUse > 0 {
		s.mu.Unlock()
		return
	}
	delete(s.sessions[ss], server)
	s.mu.Unlock()
	sl.lease.Release()
}

// release gives back every process leased to ss (its session ended).
func (s *sessionLeases) release(ss *mcp.ServerSession) {
	s.mu.Lock()
	leases := s.sessions[ss]
	delete(s.sessions, ss)
	s.mu.Unlock()
	releaseLeases(leases)
}

// releaseAll gives back every session's processes and ends the sessions
// holding them, so their releasers return (the gateway is closing).
func (s *sessionLeases) releaseAll() {
	s.mu.Lock()
	s.closed = true
	all := s.sessions
	s.sessions = map[*mcp.ServerSession]map[string]*sessionLease{}
	s.mu.Unlock()
	for ss, leases := range all {
		releaseLeases(leases)
		_ = ss.Close()
	}
}

// releaseLeases releases the acquired leases of m; one still being
// acquired is released by its acquirer (it is no longer kept).
func releaseLeases(m map[string]*sessionLease) {
	for _, sl := range m {
		select {
		case <-sl.ready:
		default:
			continue
		}
		if sl.idle != nil {
			sl.idle.Stop()
		}
		if sl.lease != nil {
			sl.lease.Release()
		}
	}
}
