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
}

func (s *Server) listProfiles(*http.Request) ([]wire.ProfileView, error) {
	cfg := s.cfg.Current()
	bound := map[string][]string{}
	for _, t := range s.tokens.List() {
		if t.Profile != "" && !slices.Contains(bound[t.Profile], t.Label) {
			bound[t.Profile] = append(bound[t.Profile], t.Label)
		}
	}
	out := []wire.ProfileView{}
	for _, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		p := cfg.Profiles[name]
		servers, missing, _ := cfg.ProfileServers(name)
		v := wire.ProfileView{Name: name, Endpoint: ProfilePath(name), Servers: servers, Missing: missing,
			Tools: p.Tools, ToolSearch: p.ToolSearch, MaxTier: string(p.MaxTier), Clients: bound[name]}
		if v.Servers == nil {
			v.Servers = []string{}
		}
		v.MissingTools = cfg.MissingTools(name, s.offeredTools)
		if n, ok := s.toolCount(name); ok {
			v.ToolCount = &n
		}
		out = append(out, v)
	}
	return out, nil
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
// none, or when it has no token).
func (s *Server) clientMaxTier(id string) tiers.Tier {
	for _, t := range s.tokens.List() {
		if t.Label == id && t.MaxTier != "" {
			return t.MaxTier
		}
	}
	return ""
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
