package api

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/tokens"
)

// Trying a tool from the dashboard. The dashboard does not call servers
// itself: the daemon calls the tool through its own MCP endpoint
// (/mcp/<server>, over loopback HTTP), as an MCP client named "dashboard",
// so the call takes every step a client's call takes (held tools, tier
// caps, the fast path, the recorder) and is in the history like any
// other. The client authenticates with a credential that exists only in
// the daemon's memory (tryCredential): it is accepted on the MCP
// endpoints alone, with the scope of a client token, and never on the API.
//
//	GET  /api/v1/servers/{name}/tools/{tool}        TryTool: the tool as a client of /mcp/<name> is given it
//	POST /api/v1/servers/{name}/tools/{tool}/call   TryRequest → TryResult
func (s *Server) tryRoutes() {
	s.mux.Handle("GET /api/v1/servers/{name}/tools/{tool}", handle(s.tryTool, http.StatusOK))
	s.mux.Handle("POST /api/v1/servers/{name}/tools/{tool}/call", handle(s.tryCall, http.StatusOK))
}

// tryCredential is the secret the daemon's own MCP client sends: made at
// start, kept in memory only.
type tryCredential struct {
	id, secret string
}

func newTryCredential() (tryCredential, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return tryCredential{}, fmt.Errorf("api: making the dashboard's MCP credential: %w", err)
	}
	return tryCredential{id: "try-" + hex.EncodeToString(b[:4]), secret: "sbtry_" + hex.EncodeToString(b[:])}, nil
}

// matches reports whether secret is the credential's.
func (c tryCredential) matches(secret string) bool {
	return c.secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(c.secret)) == 1
}

// token is what the credential stands for on an MCP endpoint.
func (c tryCredential) token() tokens.Token {
	return tokens.Token{ID: c.id, Label: wire.TryClientName, Scope: tokens.ScopeClient}
}

// TryTimeout bounds a tool called from the dashboard.
const TryTimeout = 5 * time.Minute

// trySession connects the daemon's own MCP client to /mcp/<server>.
func (s *Server) trySession(ctx context.Context, server string) (*mcp.ClientSession, error) {
	if s.mcpURL == "" {
		return nil, errorf(http.StatusServiceUnavailable, "trying tools is not available in this daemon (it was not told its own address)")
	}
	if _, ok := s.cfg.Current().Servers[server]; !ok {
		return nil, errorf(http.StatusNotFound, "no server %s in the config", quote(server))
	}
	transport := &mcp.StreamableClientTransport{Endpoint: s.mcpURL + "/" + url.PathEscape(server),
		HTTPClient: &http.Client{Transport: bearer{secret: s.try.secret, base: http.DefaultTransport}}, MaxRetries: -1, DisableStandaloneSSE: true}
	client := mcp.NewClient(&mcp.Implementation{Name: wire.TryClientName, Version: s.version}, nil)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, errorf(http.StatusBadGateway, "connecting to %s/%s as the dashboard: %v", s.mcpURL, server, err)
	}
	return cs, nil
}

// bearer adds the credential to the daemon's own MCP requests.
type bearer struct {
	secret string
	base   http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return b.base.RoundTrip(r)
}

func (s *Server) tryTool(r *http.Request) (wire.TryTool, error) {
	server, name := r.PathValue("name"), r.PathValue("tool")
	ctx, cancel := context.WithTimeout(r.Context(), s.actionTimeout)
	defer cancel()
	cs, err := s.trySession(ctx, server)
	if err != nil {
		return wire.TryTool{}, err
	}
	defer cs.Close()
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return wire.TryTool{}, errorf(http.StatusBadGateway, "listing the tools of %s: %v", quote(server), err)
		}
		if t.Name != name {
			continue
		}
		out := wire.TryTool{Server: server, Name: t.Name, Title: t.Title, Description: t.Description}
		if out.InputSchema, err = json.Marshal(t.InputSchema); err != nil {
			return wire.TryTool{}, err
		}
		if t.OutputSchema != nil {
			out.OutputSchema, _ = json.Marshal(t.OutputSchema)
		}
		if t.Annotations != nil {
			out.Annotations, _ = json.Marshal(t.Annotations)
			if out.Title == "" {
				out.Title = t.Annotations.Title
			}
		}
		return out, nil
	}
	return wire.TryTool{}, errorf(http.StatusNotFound, "%s offers no tool %s to its clients (not listed, disabled or held until approved)",
		quote(server), quote(name))
}

func (s *Server) tryCall(r *http.Request) (wire.TryResult, error) {
	server, name := r.PathValue("name"), r.PathValue("tool")
	var req wire.TryRequest
	if err := decodeStrictBody(r, &req); err != nil {
		return wire.TryResult{}, err
	}
	var args any
	if len(req.Arguments) > 0 && string(req.Arguments) != "null" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(req.Arguments, &obj); err != nil {
			return wire.TryResult{}, errorf(http.StatusBadRequest, "invalid arguments: a JSON object of the tool's arguments: %v", err)
		}
		args = req.Arguments
	}
	ctx, cancel := context.WithTimeout(r.Context(), TryTimeout)
	defer cancel()
	cs, err := s.trySession(ctx, server)
	if err != nil {
		return wire.TryResult{}, err
	}
	defer cs.Close()
	out := wire.TryResult{Server: server, Tool: name, Session: cs.ID()}
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	out.Duration = time.Since(start)
	if err != nil {
		if _, ok := errors.AsType[*jsonrpc.Error](err); ok || ctx.Err() == nil {
			out.Error = err.Error() // answered, with an error instead of a result
			return out, nil
		}
		return wire.TryResult{}, errorf(http.StatusGatewayTimeout, "calling %s of %s: %v", quote(name), quote(server), err)
	}
	if out.Result, err = json.Marshal(res); err != nil {
		return wire.TryResult{}, err
	}
	return out, nil
}
