package api

import (
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
	cfg := s.cfg.Current()
	if _, ok := cfg.Servers[req.Name]; ok {
		return wire.ServerView{}, errorf(http.StatusConflict, "server %q already exists; change it with PUT /api/v1/servers/%s", req.Name, req.Name)
	}
	if cfg.Servers == nil {
		cfg.Servers = map[string]config.Server{}
	}
	cfg.Servers[req.Name] = sc
	if err := cfg.Validate(); err != nil {
		return wire.ServerView{}, errorf(http.StatusBadRequest, "invalid server: %v", err)
	}
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && sc.PointsAt(addr.String()) {
		return wire.ServerView{}, errorf(http.StatusBadRequest, "invalid server: servers.%s.url: %s points at Switchboard's own listener (%s): "+
			"a server cannot be its own remote", req.Name, req.URL, addr)
	}
	for _, h := range slices.Sorted(maps.Keys(req.SecretHeaders)) {
		if !httpguts.ValidHeaderFieldValue(req.SecretHeaders[h]) {
			return wire.ServerView{}, errorf(http.StatusBadRequest, "invalid server: secretHeaders.%s: a header value cannot contain line breaks or control characters", h)
		}
	}
	var stored []storedSecret
	if len(req.SecretHeaders) > 0 {
		if s.secrets == nil {
			return wire.ServerView{}, errorf(http.StatusServiceUnavailable, "cannot add %q: it has secret headers (%s) and this daemon has no secret store",
				req.Name, strings.Join(slices.Sorted(maps.Keys(req.SecretHeaders)), ", "))
		}
		var err error
		if stored, err = s.storeSecrets(map[string]map[string]string{req.Name: req.SecretHeaders}); err != nil {
			s.forgetSecrets(stored)
			return wire.ServerView{}, err
		}
	}
	v, err := s.update(r.Context(), req.Name, func(c *config.Config) error {
		if _, ok := c.Servers[req.Name]; ok {
			return errorf(http.StatusConflict, "server %q was added meanwhile", req.Name)
		}
		if c.Servers == nil {
			c.Servers = map[string]config.Server{}
		}
		c.Servers[req.Name] = sc
		return nil
	})
	if err != nil {
		s.forgetSecrets(stored)
		if he, ok := errors.AsType[*httpError](err); ok {
			return wire.ServerView{}, he
		}
		return wire.ServerView{}, fmt.Errorf("adding remote server %q: %w", req.Name, err)
	}
	s.log.Info("added a remote server", "server", req.Name, "headers", len(req.Headers), "secretHeaders", len(req.SecretHeaders))
	return v, nil
}
