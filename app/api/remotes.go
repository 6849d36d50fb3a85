package api

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/config"
)

// addRemote adds a remote server by hand (POST /api/v1/remotes): its entry
// in config.json, with each secret header named in secretHeaders under a
// secret of the header's name, and the secret values in the secret store
// under the server's name. The entry is validated in full (against the
// config in force, and against this listener: Switchboard cannot be its
// own remote) before anything is stored; the secrets go in before the
// config, which the daemon acts on, and are taken back if the config
// update fails.
func (s *Server) addRemote(r *http.Request) (wire.ServerView, error) {
	var req wire.AddRemoteRequest
	// Strict: a misspelt "secretHeaders" would put a secret nowhere, or
	// leave a server without the header it needs.
	if err := decodeStrictBody(r, &req); err != nil {
		return wire.ServerView{}, err
	}
	if req.Name == "" {
		return wire.ServerView{}, errorf(http.StatusBadRequest, `invalid request body: "name" is missing`)
	}
	if req.URL == "" {
		return wire.ServerView{}, errorf(http.StatusBadRequest, `invalid request body: "url" is missing`)
	}
	sc := config.Server{URL: req.URL, Headers: req.Headers, Transport: req.Transport, Enabled: req.Enabled}
	for h := range req.SecretHeaders {
		if sc.SecretHeaders == nil {
			sc.SecretHeaders = map[string]string{}
		}
		sc.SecretHeaders[h] = h
	}
	secrets := maps.Clone(req.SecretHeaders)
	if o := req.OAuth; o != nil {
		sc.OAuth = &config.OAuth{ClientID: o.ClientID, Scopes: o.Scopes, ClientMetadataURL: o.ClientMetadataURL}
		if o.ClientSecret != "" {
			if _, clash := secrets[wire.OAuthClientSecretName]; clash {
				return wire.ServerView{}, errorf(http.StatusBadRequest, "invalid request body: secretHeaders.%s clashes with the OAuth client secret's name", wire.OAuthClientSecretName)
			}
			if secrets == nil {
				secrets = map[string]string{}
			}
			sc.OAuth.ClientSecret = wire.OAuthClientSecretName
			secrets[wire.OAuthClientSecretName] = o.ClientSecret
		}
	}
	if err := s.checkNewRemote(r, req.Name, sc); err != nil {
		return wire.ServerView{}, err
	}
	v, err := s.configureRemote(r.Context(), req.Name, sc, secrets)
	if err != nil {
		return wire.ServerView{}, err
	}
	s.log.Info("added a remote server", "server", req.Name, "headers", len(req.Headers), "secretHeaders", len(req.SecretHeaders),
		"oauthClient", req.OAuth != nil && (req.OAuth.ClientID != "" || req.OAuth.ClientMetadataURL != ""))
	return v, nil
}

// checkNewRemote validates the entry of a new remote server in full before
// anything is stored: the name is free, the entry is valid against the
// config in force, and its URL does not reach this listener (Switchboard
// cannot be its own remote).
func (s *Server) checkNewRemote(r *http.Request, name string, sc config.Server) error {
	cfg := s.cfg.Current()
	if _, ok := cfg.Servers[name]; ok {
		return errorf(http.StatusConflict, "server %q already exists; change it with PUT /api/v1/servers/%s", name, name)
	}
	if cfg.Servers == nil {
		cfg.Servers = map[string]config.Server{}
	}
	cfg.Servers[name] = sc
	if err := cfg.Validate(); err != nil {
		return errorf(http.StatusBadRequest, "invalid server: %v", err)
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && sc.PointsAt(addr.String()) {
		return errorf(http.StatusBadRequest, "invalid server: servers.%s.url: %s points at Switchboard's own listener (%s): "+
			"a server cannot be its own remote", name, sc.URL, addr)
	}
	return nil
}

// configureRemote stores a remote server: the values of its secret headers
// in the secret store under its name (secretHeaders in sc names them), then
// its entry in config.json, which the daemon acts on. sc must have been
// validated. When the config update fails, the secrets are taken back, so
// nothing is left half-written. POST /api/v1/remotes and the install of a
// catalog entry's remote both store remotes this way.
func (s *Server) configureRemote(ctx context.Context, name string, sc config.Server, secretHeaders map[string]string) (wire.ServerView, error) {
	for _, h := range slices.Sorted(maps.Keys(secretHeaders)) {
		if !httpguts.ValidHeaderFieldValue(secretHeaders[h]) {
			return wire.ServerView{}, errorf(http.StatusBadRequest, "invalid server: secretHeaders.%s: a header value cannot contain line breaks or control characters", h)
		}
	}
	var stored []storedSecret
	if len(secretHeaders) > 0 {
		if s.secrets == nil {
			return wire.ServerView{}, errorf(http.StatusServiceUnavailable, "cannot add %q: it has secret headers (%s) and this daemon has no secret store",
				name, strings.Join(slices.Sorted(maps.Keys(secretHeaders)), ", "))
		}
		var err error
		if stored, err = s.storeSecrets(map[string]map[string]string{name: secretHeaders}); err != nil {
			s.forgetSecrets(stored)
			return wire.ServerView{}, err
		}
	}
	v, err := s.update(ctx, name, func(c *config.Config) error {
		if _, ok := c.Servers[name]; ok {
			return errorf(http.StatusConflict, "server %q was added meanwhile", name)
		}
		if c.Servers == nil {
			c.Servers = map[string]config.Server{}
		}
		c.Servers[name] = sc
		return nil
	})
	if err != nil {
		s.forgetSecrets(stored)
		if he, ok := errors.AsType[*httpError](err); ok {
			return wire.ServerView{}, he
		}
		return wire.ServerView{}, fmt.Errorf("adding remote server %q: %w", name, err)
	}
	return v, nil
}
