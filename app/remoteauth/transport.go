package remoteauth

import (
	"net/http"
	"strings"
)

// Transport returns a RoundTripper over base (nil: http.DefaultTransport)
// that does for any HTTP client what mcp.StreamableClientTransport does
// with an OAuthHandler: it puts the server's token on each request and, on
// a 401 or 403, lets [SignIn.Authorize] refresh it and retries once. It is
// for mcp.SSEClientTransport's HTTPClient, which takes no OAuthHandler. A
// request whose body cannot be read again (no GetBody) is not retried.
func (s *SignIn) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &authTransport{s: s, base: base}
}

type authTransport struct {
	s    *SignIn
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, sent, err := t.send(req)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil
	}
	if err := t.s.Authorize(req.Context(), sent, resp); err != nil {
		return nil, err
	}
	retry := req.Clone(req.Context())
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		retry.Body = body
	}
	resp, _, err = t.send(retry)
	return resp, err
}

// send sends a copy of req with the current token; it returns the copy too,
// for Authorize to see which token was refused.
func (t *authTransport) send(req *http.Request) (*http.Response, *http.Request, error) {
	ts, err := t.s.TokenSource(req.Context())
	if err != nil {
		return nil, nil, err
	}
	out := req.Clone(req.Context())
	if ts != nil {
		tok, err := ts.Token()
		if err != nil {
			return nil, nil, err
		}
		out.Header.Set("Authorization", strings.TrimSpace(tok.Type()+" "+tok.AccessToken))
	}
	resp, err := t.base.RoundTrip(out)
	return resp, out, err
}
