package api

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// The browser dashboard signs in without ever holding a token in script or
// in the address bar:
//
//	switchboard open ──POST /api/v1/login-codes (cli token)──▶ one-time code
//	browser ──GET /login?code=…──▶ Set-Cookie: switchboard_session (HttpOnly,
//	          SameSite=Strict), 303 to / ──▶ the page calls /api/v1/… with the cookie
//
// The cookie holds a random session id, not a token (see dashsession.go):
// the session stands for the "dashboard" token, so revoking that token
// signs every browser out. A code works once, for LoginCodeTTL; a token may
// have MaxLoginCodes codes outstanding at a time.

const (
	// SessionCookie is the name of the dashboard's session cookie.
	SessionCookie = "switchboard_session"
	// DashboardTokenLabel is the label of the token behind the sessions.
	DashboardTokenLabel = tokens.LabelDashboard
	// MaxLoginCodes is how many unused, unexpired login codes one token
	// may have; another request gets 429.
	MaxLoginCodes = 5
)

// loginCodes are the codes handed out and not yet used.
type loginCodes struct {
	mu    sync.Mutex
	codes map[string]loginCode // code → what it opens
}

type loginCode struct {
	expires time.Time
	tokenID string // the token that asked for it
	keep    bool
}

// errTooManyCodes is the error of issue when the token has MaxLoginCodes
// codes outstanding.
var errTooManyCodes = errorf(http.StatusTooManyRequests,
	"too many dashboard login codes outstanding for this token (the limit is %d): use one, or wait %s for them to expire",
	MaxLoginCodes, wire.LoginCodeTTL)

func (lc *loginCodes) issue(now time.Time, tokenID string, keep bool) (string, time.Time, error) {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	code := hex.EncodeToString(b)
	exp := now.Add(wire.LoginCodeTTL)
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.codes == nil {
		lc.codes = map[string]loginCode{}
	}
	mine := 0
	for c, e := range lc.codes {
		switch {
		case now.After(e.expires):
			delete(lc.codes, c)
		case e.tokenID == tokenID:
			mine++
		}
	}
	if mine >= MaxLoginCodes {
		return "", time.Time{}, errTooManyCodes
	}
	lc.codes[code] = loginCode{expires: exp, tokenID: tokenID, keep: keep}
	return code, exp, nil
}

// use consumes code; it reports whether it was valid, and whether the
// session it opens is kept.
func (lc *loginCodes) use(code string, now time.Time) (ok, keep bool) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	for c, e := range lc.codes {
		if subtle.ConstantTimeCompare([]byte(c), []byte(code)) == 1 {
			delete(lc.codes, c)
			return !now.After(e.expires), e.keep
		}
	}
	return false, false
}

func (s *Server) newLoginCode(r *http.Request) (wire.LoginCode, error) {
	var req wire.LoginCodeRequest
	if r.ContentLength != 0 {
		if err := decodeBody(r, &req); err != nil {
			return wire.LoginCode{}, err
		}
	}
	code, exp, err := s.logins.issue(time.Now(), TokenID(r.Context()), req.Keep)
	if err != nil {
		return wire.LoginCode{}, err
	}
	return wire.LoginCode{Code: code, URL: "http://" + r.Host + "/login?code=" + code, Expires: exp.UTC(), Keep: req.Keep}, nil
}

// Dashboard returns the handler of the browser dashboard: GET /login, and
// the page's files from assets (a frontend build, rooted at index.html) for
// every other path outside /api/ and the MCP endpoints, with index.html for
// the page's own routes. Requests pass the Host check; the files hold no
// data, so they need no token. A nil assets serves a page that says how to
// build the dashboard.
// Text files go out gzip-compressed to a browser that accepts it (the
// build's script is ~200 kB, ~75 kB compressed), compressed once per file.
func (s *Server) Dashboard(assets fs.FS) http.Handler {
	files := http.FileServerFS(assets)
	zipped := &gzipCache{assets: assets}
	return s.logRequests(checkHost(checkOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			dropBody(w, r)
			writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed for "+r.URL.Path)
			return
		}
		if r.URL.Path == "/login" {
			s.login(w, r)
			return
		}
		if assets == nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte("This Switchboard was built without its dashboard: run `make build` (it builds the frontend first).\n"))
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		// uPlot and the virtualized table set inline styles.
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name != "" {
			if _, err := fs.Stat(assets, name); errors.Is(err, fs.ErrNotExist) {
				// One of the page's own routes: the page handles it.
				r2 := r.Clone(r.Context())
				r2.URL.Path = "/"
				r = r2
			}
		}
		if strings.HasPrefix(name, "assets/") {
			h.Set("Cache-Control", "public, max-age=31536000, immutable") // hashed names
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		file := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if file == "" {
			file = "index.html"
		}
		if compressible(file) {
			h.Add("Vary", "Accept-Encoding")
			if acceptsGzip(r.Header.Get("Accept-Encoding")) {
				if data, err := zipped.get(file); err == nil {
					h.Set("Content-Encoding", "gzip")
					h.Set("Content-Type", mime.TypeByExtension(path.Ext(file)))
					h.Set("Content-Length", strconv.Itoa(len(data)))
					w.WriteHeader(http.StatusOK)
					if r.Method != http.MethodHead {
						_, _ = w.Write(data)
					}
					return
				}
			}
		}
		files.ServeHTTP(w, r)
	}))))
}

// compressible says whether a file of the build is text worth compressing.
func compressible(name string) bool {
	switch path.Ext(name) {
	case ".html", ".js", ".css", ".svg", ".json", ".txt", ".map":
		return true
	}
	return false
}

// acceptsGzip reads an Accept-Encoding header: gzip (or *) not refused with q=0.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			return false
		}
		return true
	}
	return false
}

// gzipCache holds the compressed files of an immutable build.
type gzipCache struct {
	assets fs.FS
	mu     sync.Mutex
	files  map[string][]byte
}

func (c *gzipCache) get(name string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if data, ok := c.files[name]; ok {
		return data, nil
	}
	raw, err := fs.ReadFile(c.assets, name)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level never fails
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("compressing %s: %w", name, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing %s: %w", name, err)
	}
	if c.files == nil {
		c.files = map[string][]byte{}
	}
	c.files[name] = buf.Bytes()
	return c.files[name], nil
}

// login serves GET /login?code=: a valid code sets the session cookie and
// sends the browser to the dashboard, so neither the code nor a token stays
// in the address bar.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	ok, keep := false, false
	if code != "" {
		ok, keep = s.logins.use(code, time.Now())
	}
	if !ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte("This sign-in link has expired or was used already. Run `switchboard open` for a new one.\n"))
		return
	}
	tok, err := s.tokens.Ensure(DashboardTokenLabel)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "cannot make the dashboard's token: "+err.Error())
		return
	}
	id, err := s.dash.start(tok.ID, keep)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "cannot keep the dashboard's session: "+err.Error())
		return
	}
	cookie := &http.Cookie{Name: SessionCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode}
	if keep {
		cookie.MaxAge = int(DashboardKeepMaxAge / time.Second)
	} // else a browser-session cookie; the server ends it anyway
	http.SetCookie(w, cookie)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
