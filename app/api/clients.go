package api

import (
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/app/clients"
)

// ClientsOptions connect the API to the MCP clients' config files.
type ClientsOptions struct {
	Editor *clients.Editor
	// Env locates the clients' files (clients.EnvFromOS in the daemon).
	Env clients.Env
	// GatewayURL is the aggregated MCP endpoint entries point at.
	GatewayURL string
	// BinaryPath is the switchboard binary, for the stdio bridge entry.
	BinaryPath string
}

// ClientView is one MCP client as the API shows it.
type ClientView struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Path      string `json:"path,omitempty"`
	Installed bool   `json:"installed"` // its config file or folder exists
	Connected bool   `json:"connected"` // it has Switchboard's entry
	// Servers are the entries of its config; the values of env variables
	// and headers whose names look secret are masked.
	Servers []clients.Entry `json:"servers"`
	Error   string          `json:"error,omitempty"` // the file could not be read
}

// ClientChange is the body of POST /api/v1/clients/{id}/plan and /apply.
type ClientChange struct {
	// Action is "connect" or "disconnect".
	Action string `json:"action"`
	// Servers, on connect, get an entry of their own (/mcp/<server>).
	Servers []string `json:"servers,omitempty"`
	// Hash, on apply, is the Hash of the plan the user saw: the file must
	// still be what it was then.
	Hash string `json:"hash,omitempty"`
}

// ClientPlan is a change to a client's file, shown before it is made.
type ClientPlan struct {
	Client  string `json:"client"`
	Path    string `json:"path"`
	Hash    string `json:"hash"`    // of the file as it is now; send it back to apply
	Diff    string `json:"diff"`    // unified diff, with the token masked
	Changed bool   `json:"changed"` // false: applying changes nothing
}

const maskedSecret = "••••••"

func (s *Server) clientRoutes() {
	s.mux.Handle("GET /api/v1/clients", handle(s.listClients, http.StatusOK))
	s.mux.Handle("POST /api/v1/clients/{id}/plan", handle(s.planClient, http.StatusOK))
	s.mux.Handle("POST /api/v1/clients/{id}/apply", handle(s.applyClient, http.StatusOK))
}

func (s *Server) clientsOn() (ClientsOptions, error) {
	if s.clients.Editor == nil {
		return ClientsOptions{}, errorf(http.StatusServiceUnavailable, "client configs are not available in this daemon")
	}
	return s.clients, nil
}

func (s *Server) listClients(r *http.Request) ([]ClientView, error) {
	co, err := s.clientsOn()
	if err != nil {
		return nil, err
	}
	var out []ClientView
	for _, st := range co.Editor.Detect(co.Env) {
		out = append(out, clientView(st))
	}
	return out, nil
}

func clientView(st clients.Status) ClientView {
	v := ClientView{ID: st.Client.ID, Name: st.Client.Name, Path: st.Path, Installed: st.Installed,
		Connected: st.Connected, Servers: []clients.Entry{}}
	if st.Err != nil {
		v.Error = st.Err.Error()
	}
	for _, e := range st.Entries {
		e.Env = maskSecrets(e.Env)
		e.Headers = maskSecrets(e.Headers)
		v.Servers = append(v.Servers, e)
	}
	return v
}

func maskSecrets(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if clients.LooksSecret(k) {
			v = maskedSecret
		}
		out[k] = v
	}
	return out
}

// plan computes the change for client id; connecting issues (or reuses)
// the client's own token, so history knows it and it can be revoked alone.
func (s *Server) plan(r *http.Request) (*clients.Plan, ClientChange, error) {
	co, err := s.clientsOn()
	if err != nil {
		return nil, ClientChange{}, err
	}
	c, ok := clients.Lookup(r.PathValue("id"))
	if !ok {
		var ids []string
		for _, c := range clients.Table {
			ids = append(ids, c.ID)
		}
		return nil, ClientChange{}, errorf(http.StatusNotFound, "unknown client %q: one of %s", r.PathValue("id"), strings.Join(ids, ", "))
	}
	var change ClientChange
	if err := decodeBody(r, &change); err != nil {
		return nil, change, err
	}
	var cc clients.Change
	switch change.Action {
	case "connect":
		tok, err := s.tokens.Ensure(c.ID)
		if err != nil {
			return nil, change, err
		}
		cc = clients.Connect{URL: co.GatewayURL, Token: tok.Secret, BinaryPath: co.BinaryPath, PerServer: change.Servers}
	case "disconnect":
		cc = clients.Disconnect{}
	default:
		return nil, change, errorf(http.StatusBadRequest, "invalid action %q: connect or disconnect", change.Action)
	}
	p, err := co.Editor.Plan(c, co.Env, cc)
	if err != nil {
		return nil, change, errorf(http.StatusUnprocessableEntity, "%v", err)
	}
	return p, change, nil
}

func (s *Server) planClient(r *http.Request) (ClientPlan, error) {
	p, _, err := s.plan(r)
	if err != nil {
		return ClientPlan{}, err
	}
	return ClientPlan{Client: p.Client.ID, Path: p.Path, Hash: p.Hash, Diff: p.Diff, Changed: p.Changed()}, nil
}

func (s *Server) applyClient(r *http.Request) (ClientView, error) {
	p, change, err := s.plan(r)
	if err != nil {
		return ClientView{}, err
	}
	if change.Hash == "" {
		return ClientView{}, errorf(http.StatusBadRequest, "missing hash: apply the plan you were shown (POST .../plan first)")
	}
	if change.Hash != p.Hash {
		return ClientView{}, errorf(http.StatusConflict, "%s changed since the plan was shown; look at the new plan first", p.Path)
	}
	if p.Changed() {
		if err := s.clients.Editor.Apply(p); err != nil {
			return ClientView{}, errorf(http.StatusConflict, "writing %s: %v", p.Path, err)
		}
	}
	for _, st := range s.clients.Editor.Detect(s.clients.Env) {
		if st.Client.ID == p.Client.ID {
			return clientView(st), nil
		}
	}
	return ClientView{}, errorf(http.StatusNotFound, "unknown client %q", p.Client.ID)
}
