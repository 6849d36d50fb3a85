package remoteauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/switchboardhq/switchboard/app/secrets"
)

// storeKey is the secret-store key of a server's sign-in, beside the
// server's other secrets (header and environment secrets, whose names have
// no ':').
const storeKey = "oauth:session"

const recordVersion = 1

// How the client was registered with the authorization server.
const (
	registeredDynamic          = "dynamic" // RFC 7591: the id (and secret) are kept for the next sign-in
	registeredPre              = "pre-registered"
	registeredMetadataDocument = "metadata-document"
)

// record is a server's sign-in as the secret store keeps it: one JSON value,
// so it is written whole or not at all.
type record struct {
	Version int `json:"version"`
	// ServerURL is the remote server the tokens were got for: the entry's
	// URL changed in config.json, they are not sent to the new one.
	ServerURL     string           `json:"serverUrl,omitempty"`
	Registered    string           `json:"registered"`
	ClientID      string           `json:"clientId"`
	ClientSecret  string           `json:"clientSecret,omitempty"`
	AuthStyle     oauth2.AuthStyle `json:"authStyle"`
	RedirectURL   string           `json:"redirectUrl"`
	Issuer        string           `json:"issuer,omitempty"`
	AuthURL       string           `json:"authUrl"`
	TokenURL      string           `json:"tokenUrl"`
	RevocationURL string           `json:"revocationUrl,omitempty"`
	Scopes        []string         `json:"scopes,omitempty"`
	Token         *oauth2.Token    `json:"token,omitempty"` // nil: signed out or refused, client kept
}

func (r *record) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID: r.ClientID, ClientSecret: r.ClientSecret, RedirectURL: r.RedirectURL, Scopes: r.Scopes,
		Endpoint: oauth2.Endpoint{AuthURL: r.AuthURL, TokenURL: r.TokenURL, AuthStyle: r.AuthStyle},
	}
}

func (r *record) withToken(tok *oauth2.Token) *record {
	next := *r
	next.Token = tok
	return &next
}

func loadRecord(store Secrets, server string) (*record, error) {
	v, err := store.Get(server, storeKey)
	if errors.Is(err, secrets.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading the sign-in of remote server %q: %w", server, err)
	}
	var r record
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		// The value is not quoted: it holds tokens.
		return nil, fmt.Errorf("loading the sign-in of remote server %q: the stored value is not valid JSON", server)
	}
	if r.Version != recordVersion {
		return nil, fmt.Errorf("loading the sign-in of remote server %q: unsupported version %d", server, r.Version)
	}
	return &r, nil
}

func saveRecord(store Secrets, server string, r *record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("saving the sign-in of remote server %q: %w", server, err)
	}
	if err := store.Set(server, storeKey, string(b)); err != nil {
		return fmt.Errorf("saving the sign-in of remote server %q: %w", server, err)
	}
	return nil
}

// savingSource is the token source of a signed-in server: oauth2's reusing
// source (which refreshes a token about to expire) that saves each new
// token to the secret store and turns a refused refresh into a needed
// sign-in.
type savingSource struct {
	s    *SignIn
	base oauth2.TokenSource

	mu   sync.Mutex
	last string // the access token handed out last
}

func (s *SignIn) newSource(rec *record) *savingSource {
	// The source outlives any request: its refreshes get a background
	// context that carries the HTTP client.
	ctx := s.m.contextWithClient(context.Background())
	return &savingSource{s: s, base: rec.config().TokenSource(ctx, rec.Token), last: rec.Token.AccessToken}
}

func (p *savingSource) lastToken() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// Token implements oauth2.TokenSource.
func (p *savingSource) Token() (*oauth2.Token, error) {
	tok, err := p.base.Token()
	if err != nil {
		return nil, p.s.refreshFailed(p, err)
	}
	p.mu.Lock()
	changed := tok.AccessToken != p.last
	p.last = tok.AccessToken
	p.mu.Unlock()
	if changed {
		p.s.saveRefreshed(p, tok)
	}
	return tok, nil
}

// saveRefreshed keeps a token that the source refreshed before expiry.
func (s *SignIn) saveRefreshed(p *savingSource, tok *oauth2.Token) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ts != p || s.rec == nil {
		return
	}
	next := s.rec.withToken(tok)
	if err := saveRecord(s.m.opts.Secrets, s.name, next); err != nil {
		s.m.logger.Warn("saving the refreshed token failed", "server", s.name, "err", err)
		return
	}
	s.rec = next
	s.m.logger.Debug("token refreshed before expiry", "server", s.name, "expiry", tok.Expiry)
}

// metadataRecorder watches the go-sdk handler's discovery for the
// authorization server's metadata and keeps the two fields the handler
// does not pass on: the issuer and the revocation endpoint (for sign-out).
type metadataRecorder struct {
	base http.RoundTripper

	mu         sync.Mutex
	issuer     string
	revocation string
}

func (m *metadataRecorder) wrap(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	m.base = base
	return m
}

func (m *metadataRecorder) result() (issuer, revocation string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.issuer, m.revocation
}

const maxMetadataSize = 1 << 20

// RoundTrip implements http.RoundTripper.
func (m *metadataRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := m.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK ||
		!(strings.Contains(req.URL.Path, "/.well-known/oauth-authorization-server") ||
			strings.Contains(req.URL.Path, "/.well-known/openid-configuration")) {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var meta oauthex.AuthServerMeta
	if json.Unmarshal(body, &meta) == nil && meta.Issuer != "" {
		m.mu.Lock()
		m.issuer, m.revocation = meta.Issuer, meta.RevocationEndpoint
		m.mu.Unlock()
	}
	return resp, nil
}

// revoke asks the authorization server to revoke rec's tokens (RFC 7009):
// the refresh token first (revoking it revokes the access tokens issued
// with it at most servers), then the access token.
func (m *Manager) revoke(ctx context.Context, rec *record) error {
	var errs []error
	for _, t := range []struct{ value, hint string }{
		{rec.Token.RefreshToken, "refresh_token"}, {rec.Token.AccessToken, "access_token"},
	} {
		if t.value != "" {
			errs = append(errs, m.revokeOne(ctx, rec, t.value, t.hint))
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) revokeOne(ctx context.Context, rec *record, token, hint string) error {
	form := url.Values{"token": {token}, "token_type_hint": {hint}}
	basic := rec.ClientSecret != "" && rec.AuthStyle != oauth2.AuthStyleInParams
	if !basic {
		form.Set("client_id", rec.ClientID)
		if rec.ClientSecret != "" {
			form.Set("client_secret", rec.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rec.RevocationURL, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("revoking the %s: %w", hint, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		// RFC 6749 section 2.3.1: the id and secret are form-encoded first.
		req.SetBasicAuth(url.QueryEscape(rec.ClientID), url.QueryEscape(rec.ClientSecret))
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return fmt.Errorf("revoking the %s: %w", hint, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("revoking the %s: the server answered HTTP %d", hint, resp.StatusCode)
	}
	return nil
}
