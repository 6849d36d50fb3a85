package api

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/atomicfile"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// The dashboard's cookie holds a random session id, never a token: browsers
// send a cookie for 127.0.0.1 to every port of it, so any local web server
// the user visits may see it. The id means something only to this daemon's
// session table, and only as a cookie on /api/: it is refused as a bearer
// token everywhere.
//
// A session stands for the "dashboard" token: revoking that token (tokens
// revoke dashboard) ends every session. A session ends after DashboardIdle
// without a request or DashboardMaxAge after sign-in, and with the daemon,
// unless the user chose "keep me signed in": such a session lasts
// DashboardKeepMaxAge and survives restarts in DashboardSessionsFile (0600),
// which holds a hash of the id, never the id.

const (
	// DashboardIdle ends a session this long after its last request.
	DashboardIdle = 12 * time.Hour
	// DashboardMaxAge ends a session this long after sign-in.
	DashboardMaxAge = 24 * time.Hour
	// DashboardKeepMaxAge ends a "keep me signed in" session this long
	// after sign-in; it also ends after DashboardKeepIdle without a request.
	DashboardKeepMaxAge = 30 * 24 * time.Hour
	DashboardKeepIdle   = 7 * 24 * time.Hour
	// DashboardSessionsFile keeps the "keep me signed in" sessions, in
	// the data directory.
	DashboardSessionsFile = "dashboard-sessions.json"
)

// dashSession is one signed-in browser.
type dashSession struct {
	Hash    string    `json:"hash"` // hex SHA-256 of the cookie value
	TokenID string    `json:"tokenId"`
	Created time.Time `json:"created"`
	Seen    time.Time `json:"seen"`
	Keep    bool      `json:"-"` // the persisted ones are all kept
}

func (d *dashSession) expired(now time.Time) bool {
	idle, maxAge := DashboardIdle, DashboardMaxAge
	if d.Keep {
		idle, maxAge = DashboardKeepIdle, DashboardKeepMaxAge
	}
	return now.Sub(d.Seen) > idle || now.Sub(d.Created) > maxAge
}

// dashSessions is the session table.
type dashSessions struct {
	tokens *tokens.Store
	path   string // "" keeps nothing on disk
	log    *slog.Logger

	mu       sync.Mutex
	sessions map[string]*dashSession // by Hash
	saved    time.Time               // when the file was last written
}

// newDashSessions loads the kept sessions from path ("" for none). A file
// that cannot be read is logged and ignored: the user signs in again.
func newDashSessions(store *tokens.Store, path string, log *slog.Logger) *dashSessions {
	d := &dashSessions{tokens: store, path: path, log: log, sessions: map[string]*dashSession{}}
	if path == "" {
		return d
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return d
	}
	var kept []*dashSession
	if err == nil {
		err = json.Unmarshal(data, &kept)
	}
	if err != nil {
		log.Warn("the kept dashboard sessions cannot be read; sign in again", "file", path, "err", err)
		return d
	}
	now := time.Now()
	for _, s := range kept {
		s.Keep = true
		if _, ok := store.Lookup(s.TokenID); ok && !s.expired(now) && s.Hash != "" {
			d.sessions[s.Hash] = s
		}
	}
	return d
}

func hashSessionID(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:])
}

// start makes a session for the token tokenID and returns the cookie value.
func (d *dashSessions) start(tokenID string, keep bool) (string, error) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	// A prefix unlike a token's "sb_", so that nobody mistakes one for
	// the other in a bug report.
	id := "sbs_" + base64.RawURLEncoding.EncodeToString(b[:])
	now := time.Now()
	s := &dashSession{Hash: hashSessionID(id), TokenID: tokenID, Created: now, Seen: now, Keep: keep}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sessions[s.Hash] = s
	if keep {
		if err := d.saveLocked(); err != nil {
			delete(d.sessions, s.Hash)
			return "", err
		}
	}
	return id, nil
}

// verify returns the token a cookie value stands for: the session must
// exist, not be expired, and its token must not be revoked.
func (d *dashSessions) verify(cookie string) (tokens.Token, bool) {
	hash := hashSessionID(cookie)
	now := time.Now()
	d.mu.Lock()
	s, ok := d.sessions[hash]
	if !ok {
		d.mu.Unlock()
		return tokens.Token{}, false
	}
	if s.expired(now) {
		d.dropLocked(s)
		d.mu.Unlock()
		return tokens.Token{}, false
	}
	tokenID := s.TokenID
	d.mu.Unlock()

	tok, ok := d.tokens.Lookup(tokenID)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !ok {
		d.dropLocked(s)
		return tokens.Token{}, false
	}
	s.Seen = now
	// A kept session's last use goes to disk now and then, not on every
	// request, so that its idle expiry survives a restart roughly.
	if s.Keep && now.Sub(d.saved) > time.Hour {
		if err := d.saveLocked(); err != nil {
			d.log.Warn("saving the kept dashboard sessions", "err", err)
		}
	}
	return tok, true
}

// endToken ends every session of token tokenID (it was revoked).
func (d *dashSessions) endToken(tokenID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.sessions {
		if s.TokenID == tokenID {
			d.dropLocked(s)
		}
	}
}

func (d *dashSessions) dropLocked(s *dashSession) {
	delete(d.sessions, s.Hash)
	if s.Keep {
		if err := d.saveLocked(); err != nil {
			d.log.Warn("saving the kept dashboard sessions", "err", err)
		}
	}
}

// saveLocked writes the kept sessions (hashes, token ids, times) to the
// file, 0600; no file when there are none.
func (d *dashSessions) saveLocked() error {
	if d.path == "" {
		return nil
	}
	now := time.Now()
	var kept []*dashSession
	for _, s := range d.sessions {
		if s.Keep && !s.expired(now) {
			kept = append(kept, s)
		}
	}
	d.saved = now
	if len(kept) == 0 {
		if err := os.Remove(d.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", d.path, err)
		}
		return nil
	}
	data, err := json.MarshalIndent(kept, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding dashboard sessions: %w", err)
	}
	return atomicfile.Write(d.path, append(data, '\n'), 0o600)
}
