package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/clients"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// ProfilePath is the path of profile's MCP endpoint.
func ProfilePath(profile string) string { return "/mcp/p/" + profile }

// profileOf returns the profile named by an MCP endpoint's path
// (/mcp/p/<profile>, or /sse/p/<profile> for the legacy transport), or ""
// for every other endpoint.
func profileOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/mcp/p/")
	if !ok {
		if rest, ok = strings.CutPrefix(path, "/sse/p/"); !ok {
			return ""
		}
	}
	return strings.TrimSuffix(rest, "/")
}

// refuseOtherEndpoint answers a request of a token bound to a profile that
// asks for another MCP endpoint than the profile's (/mcp/p/<profile>, or
// /sse/p/<profile> for the legacy transport): /mcp, /mcp/<server>, /sse,
// another profile's, with 403 and a JSON-RPC error naming the profile, and reports
// whether it did. A token without a profile reaches every MCP endpoint,
// profiles' included: it is what a client had before profiles existed, and
// a user who points a client at /mcp/p/<profile> by hand expects it to
// work.
func refuseOtherEndpoint(w http.ResponseWriter, r *http.Request, tok tokens.Token) bool {
	if tok.Profile == "" || profileOf(r.URL.Path) == tok.Profile {
		return false
	}
	msg := "the token " + quote(tok.Label) + " is bound to profile " + quote(tok.Profile) +
		": it reaches " + ProfilePath(tok.Profile) + " only, not " + quote(r.URL.Path)
	dropBody(w, r)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	// A JSON-RPC error, which MCP clients show; without an id, since the
	// request is not read.
	_ = json.NewEncoder(w).Encode(rpcErrorResponse{JSONRPC: "2.0", Error: rpcError{Code: codeInvalidRequest, Message: msg,
		Data: map[string]string{"profile": tok.Profile, "endpoint": ProfilePath(tok.Profile)}}})
	return true
}

// rpcErrorResponse is a JSON-RPC 2.0 error response.
type rpcErrorResponse struct {
	JSONRPC string   `json:"jsonrpc"`
	ID      any      `json:"id"`
	Error   rpcError `json:"error"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// codeInvalidRequest is JSON-RPC's "Invalid Request".
const codeInvalidRequest = -32600

// codeServerError is the JSON-RPC code of an HTTP-level refusal (as the
// gateway and the TypeScript SDK answer theirs).
const codeServerError = -32000

// ToolCounter counts the tools an MCP endpoint lists now: /mcp for profile
// "", else /mcp/p/<profile>; ok is false for a profile the gateway does not
// serve. *gateway.Gateway implements it; Options.Tools may.
type ToolCounter interface {
	ToolCount(profile string) (n int, ok bool)
}

func (s *Server) profileRoutes() {
	s.mux.Handle("GET /api/v1/profiles", handle(s.listProfiles, http.StatusOK))
	s.mux.Handle("POST /api/v1/profiles", handle(s.createProfile, http.StatusCreated))
	s.mux.Handle("PUT /api/v1/profiles/{name}", handle(s.replaceProfile, http.StatusOK))
	s.mux.Handle("DELETE /api/v1/profiles/{name}", handle(s.deleteProfile, http.StatusNoContent))
}

func (s *Server) listProfiles(*http.Request) ([]wire.ProfileView, error) {
	cfg := s.cfg.Current()
	bound := s.boundClients()
	out := []wire.ProfileView{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		out = append(out, s.profileView(cfg, name, bound))
	}
	return out, nil
}

// boundClients returns, by profile, the labels of the tokens bound to it.
func (s *Server) boundClients() map[string][]string {
	bound := map[string][]string{}
	for _, t := range s.tokens.List() {
		if t.Profile != "" && !slices.Contains(bound[t.Profile], t.Label) {
			bound[t.Profile] = append(bound[t.Profile], t.Label)
		}
	}
	return bound
}

func (s *Server) profileView(cfg *config.Config, name string, bound map[string][]string) wire.ProfileView {
	p := cfg.Profiles[name]
	servers, missing, _ := cfg.ProfileServers(name)
	v := wire.ProfileView{Name: name, Endpoint: ProfilePath(name), Servers: servers, Missing: missing,
		Tools: p.Tools, ToolSearch: p.ToolSearch, MaxTier: string(p.MaxTier), AskBeforeDestructive: p.AskBeforeDestructive, Clients: bound[name]}
	if v.Servers == nil {
		v.Servers = []string{}
	}
	v.MissingTools = cfg.MissingTools(name, s.offeredTools)
	if n, ok := s.toolCount(name); ok {
		v.ToolCount = &n
	}
	if rc, ok := s.tools.(ReachableCounter); ok {
		if n, ok := rc.ReachableToolCount(name); ok {
			v.ReachableTools = &n
		}
	}
	return v
}

// ReachableCounter counts the tools a client reaches through an MCP
// endpoint (in search mode, those its two tools find and call); see
// ToolCounter. *gateway.Gateway implements it.
type ReachableCounter interface {
	ReachableToolCount(profile string) (n int, ok bool)
}

func unknownProfile(name string, cfg *config.Config) *httpError {
	have := "config.json has no profiles"
	if names := slices.Sorted(maps.Keys(cfg.Profiles)); len(names) > 0 {
		have = "the profiles are " + strings.Join(names, ", ")
	}
	return errorf(http.StatusNotFound, "unknown profile %s: %s", quote(name), have)
}

// createProfile adds a profile to config.json (POST /api/v1/profiles).
func (s *Server) createProfile(r *http.Request) (wire.ProfileView, error) {
	var req wire.ProfileRequest
	if err := decodeStrictBody(r, &req); err != nil {
		return wire.ProfileView{}, err
	}
	name := req.Name
	if name == "" {
		return wire.ProfileView{}, errorf(http.StatusBadRequest, `invalid profile: name: missing: give the profile a name, like "coding"`)
	}
	return s.writeProfile(r, name, func(c *config.Config) (config.Profile, error) {
		if _, ok := c.Profiles[name]; ok {
			return config.Profile{}, errorf(http.StatusConflict, "profile %s already exists; change it with PUT /api/v1/profiles/%s", quote(name), name)
		}
		return config.Profile{}, nil
	}, req)
}

// replaceProfile replaces a profile of config.json (PUT
// /api/v1/profiles/{name}); keys of it this daemon does not know are kept.
// Clients bound to it keep their tokens: the gateway serves the new
// profile on the same endpoint, and tells their open sessions that the
// tools changed.
func (s *Server) replaceProfile(r *http.Request) (wire.ProfileView, error) {
	name := r.PathValue("name")
	var req wire.ProfileRequest
	if err := decodeStrictBody(r, &req); err != nil {
		return wire.ProfileView{}, err
	}
	if req.Name != "" && req.Name != name {
		return wire.ProfileView{}, errorf(http.StatusBadRequest, "invalid profile: name: %s is not %s: a profile cannot be renamed (its clients' tokens are bound to its name); create the new one and delete this one", quote(req.Name), quote(name))
	}
	return s.writeProfile(r, name, func(c *config.Config) (config.Profile, error) {
		old, ok := c.Profiles[name]
		if !ok {
			return config.Profile{}, unknownProfile(name, c)
		}
		return old, nil
	}, req)
}

// writeProfile puts the profile of req into config.json under name: base
// returns the profile it replaces (its unknown keys are kept) or refuses.
func (s *Server) writeProfile(r *http.Request, name string, base func(*config.Config) (config.Profile, error), req wire.ProfileRequest) (wire.ProfileView, error) {
	cfg, err := s.cfg.Update(r.Context(), func(c *config.Config) error {
		old, err := base(c)
		if err != nil {
			return err
		}
		p := old
		p.Servers, p.Tools, p.ToolSearch, p.MaxTier = slices.Clone(req.Servers), req.Tools, req.ToolSearch, tiers.Tier(req.MaxTier)
		if c.Profiles == nil {
			c.Profiles = map[string]config.Profile{}
		}
		c.Profiles[name] = p
		if err := c.Validate(); err != nil {
			return profileError(name, err)
		}
		return s.checkProfileNames(c, name, old, p)
	})
	if err != nil {
		return wire.ProfileView{}, updateError(err)
	}
	s.log.Info("profile written", "profile", name, "servers", len(req.Servers), "toolSearch", req.ToolSearch)
	return s.profileView(cfg, name, s.boundClients()), nil
}

// profileError names the field of a validation error of profile name as
// the request does ("servers[1]", "tools.fs", "name").
func profileError(name string, err error) error {
	ce, ok := errors.AsType[*config.Error](err)
	if !ok {
		return errorf(http.StatusBadRequest, "invalid profile: %v", err)
	}
	prefix := "profiles." + name
	if ce.Field != prefix && !strings.HasPrefix(ce.Field, prefix+".") {
		// Another part of config.json is wrong (a hand edit the store
		// adopted): say so as it is.
		return errorf(http.StatusConflict, "config.json has another problem, fix it first: %v", err)
	}
	field := strings.TrimPrefix(strings.TrimPrefix(ce.Field, prefix), ".")
	if field == "" {
		field = "name"
	}
	return errorf(http.StatusBadRequest, "invalid profile: %s: %v", field, ce.Err)
}

// checkProfileNames refuses servers the config does not have and tools
// their server does not offer (once it is listed), which the endpoint
// would silently leave out. Names the profile already had pass: config.json
// allows them (an uninstalled server does not break its profiles).
func (s *Server) checkProfileNames(c *config.Config, name string, old, p config.Profile) error {
	for i, server := range p.Servers {
		if _, ok := c.Servers[server]; ok || slices.Contains(old.Servers, server) {
			continue
		}
		have := "config.json has no servers"
		if names := slices.Sorted(maps.Keys(c.Servers)); len(names) > 0 {
			have = "the servers are " + strings.Join(names, ", ")
		}
		return errorf(http.StatusBadRequest, "invalid profile: servers[%d]: unknown server %s: %s", i, quote(server), have)
	}
	for _, server := range slices.Sorted(maps.Keys(p.Tools)) {
		offered, known := s.offeredTools(server)
		if !known {
			continue
		}
		for i, tool := range p.Tools[server] {
			if slices.Contains(offered, tool) || slices.Contains(old.Tools[server], tool) {
				continue
			}
			return errorf(http.StatusBadRequest, "invalid profile: tools.%s[%d]: server %s offers no tool %s; it offers %s",
				server, i, quote(server), quote(tool), strings.Join(offered, ", "))
		}
	}
	return nil
}

// deleteProfile removes a profile from config.json (DELETE
// /api/v1/profiles/{name}). A profile a client's token is bound to is
// refused: the client would be refused on every request until connected
// elsewhere, so that is done first.
func (s *Server) deleteProfile(r *http.Request) (struct{}, error) {
	name := r.PathValue("name")
	_, err := s.cfg.Update(r.Context(), func(c *config.Config) error {
		if _, ok := c.Profiles[name]; !ok {
			return unknownProfile(name, c)
		}
		if bound := s.boundClients()[name]; len(bound) > 0 {
			return errorf(http.StatusConflict, "profile %s is in use by %s: connect %s to /mcp or another profile first (Clients page, or switchboard clients connect %s --profile NAME), then delete it",
				quote(name), strings.Join(bound, ", "), pronoun(len(bound)), bound[0])
		}
		delete(c.Profiles, name)
		return nil
	})
	if err != nil {
		return struct{}{}, updateError(err)
	}
	s.log.Info("profile deleted", "profile", name)
	return struct{}{}, nil
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// offeredTools returns the names of the tools server lists now (disabled
// and held ones included: the server offers them), and whether the
// gateway has listed it.
func (s *Server) offeredTools(server string) ([]string, bool) {
	if s.tools == nil {
		return nil, false
	}
	tools := s.tools.Tools(server)
	if tools == nil {
		return nil, false
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names, true
}

func (s *Server) toolCount(profile string) (int, bool) {
	tc, ok := s.tools.(ToolCounter)
	if !ok {
		return 0, false
	}
	return tc.ToolCount(profile)
}

// checkProfileChange refuses a connect to a profile config.json does not
// have, or with entries of its own servers, which a token bound to a
// profile could not reach.
func (s *Server) checkProfileChange(change wire.ClientChange) error {
	if change.Profile == "" {
		return nil
	}
	cfg := s.cfg.Current()
	if _, ok := cfg.Profiles[change.Profile]; !ok {
		names := slices.Sorted(maps.Keys(cfg.Profiles))
		have := "config.json has no profiles"
		if len(names) > 0 {
			have = "the profiles are " + strings.Join(names, ", ")
		}
		return errorf(http.StatusUnprocessableEntity, "unknown profile %s: %s", quote(change.Profile), have)
	}
	if len(change.Servers) > 0 {
		return errorf(http.StatusUnprocessableEntity, "a client connected to profile %s cannot have entries of its own servers (%s): its token reaches %s only",
			quote(change.Profile), strings.Join(change.Servers, ", "), ProfilePath(change.Profile))
	}
	return nil
}

// clientProfile returns the profile the tokens of client id are bound to
// ("" for none, or when it has no token).
func (s *Server) clientProfile(id string) string {
	for _, t := range s.tokens.List() {
		if t.Label == id && t.Profile != "" {
			return t.Profile
		}
	}
	return ""
}

// bindClient binds client c's tokens to profile ("" unbinds them), logging
// a change.
func (s *Server) bindClient(c clients.Client, profile string) error {
	if s.clientProfile(c.ID) == profile {
		return nil
	}
	toks, err := s.tokens.Bind(c.ID, profile)
	if errors.Is(err, tokens.ErrNotFound) && profile == "" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s's config file was written, but its token was not bound to profile %s: %w", c.Name, quote(profile), err)
	}
	if profile == "" {
		s.log.Info("unbound a client's token from its profile", "client", c.ID, "tokens", len(toks))
	} else {
		s.log.Info("bound a client's token to a profile", "client", c.ID, "profile", profile, "tokens", len(toks))
	}
	return nil
}

// clientMaxTier returns the tier cap of the tokens of client id ("" for
// none); for a client without a token (revoked), the cap remembered for
// it, which the token issued to it next gets (tokens.CapsFileName).
func (s *Server) clientMaxTier(id string) tiers.Tier {
	has := false
	for _, t := range s.tokens.List() {
		if t.Label == id {
			has = true
			if t.MaxTier != "" {
				return t.MaxTier
			}
		}
	}
	if has {
		return ""
	}
	caps, err := s.tokens.Caps()
	if err != nil {
		s.log.Warn("reading the remembered token caps", "err", err)
		return ""
	}
	return caps[id]
}

// capClient caps the tiers client c's tokens see at max ("" lifts the
// cap), logging a change.
func (s *Server) capClient(c clients.Client, max tiers.Tier) error {
	if s.clientMaxTier(c.ID) == max {
		return nil
	}
	toks, err := s.tokens.SetMaxTier(c.ID, max)
	if errors.Is(err, tokens.ErrNotFound) && max == "" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s's config file was written, but its token's tier cap was not set to %s: %w", c.Name, quote(string(max)), err)
	}
	s.log.Info("set a client's token tier cap", "client", c.ID, "maxTier", string(max), "tokens", len(toks))
	if s.capsChanged != nil {
		s.capsChanged()
	}
	return nil
}

// withToolCount adds to v the client's profile, how many tools its endpoint
// lists, its known limit, and a warning when it sees more than that.
func (s *Server) withToolCount(v wire.ClientView, c clients.Client) wire.ClientView {
	if p := s.clientProfile(c.ID); p != "" {
		v.Profile = p // else the one its entry names, if its token was revoked (withTokenState)
	}
	v.MaxTier = string(s.clientMaxTier(c.ID))
	v.ToolLimit, v.ToolLimitSource = c.ToolLimit, c.ToolLimitSource
	if !v.Connected {
		return v
	}
	if v.Profile != "" {
		if _, ok := s.cfg.Current().Profiles[v.Profile]; !ok {
			v.Warning = fmt.Sprintf("its token is bound to profile %q, which is not in config.json: every request it makes is refused (404)", v.Profile)
			return v
		}
	}
	n, ok := s.toolCount(v.Profile)
	if !ok {
		return v
	}
	v.Tools = &n
	if c.ToolLimit > 0 && n > c.ToolLimit {
		where := "/mcp"
		if v.Profile != "" {
			where = "profile " + quote(v.Profile)
		}
		v.Warning = fmt.Sprintf("%s sees %d tools on %s, more than the %d it takes: connect it to a profile with fewer tools (clients connect %s --profile NAME)",
			c.Name, n, where, c.ToolLimit, c.ID)
	}
	return v
}
