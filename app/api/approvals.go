package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/approvals"
	"github.com/switchboardhq/switchboard/app/clients"
)

// Routes of tool approval (rug-pull protection, see app/approvals):
//
//	GET  /api/v1/held-tools[?server=NAME]   []wire.HeldTool: tools held from clients, with what changed
//	POST /api/v1/servers/{name}/approve     wire.ApproveRequest → wire.ApproveResult
//
// (the wire types are in app/api/wire/approvals.go)

// Approvals is what the API needs of the tool approvals; the daemon
// implements it over an *approvals.Store, recording each approval in the
// history and making the approved tools visible at once.
type Approvals interface {
	Held() []approvals.Held
	// Approve approves server's held tool, or all of them when tool is
	// "" (see approvals.Store.Approve).
	Approve(server, tool, fingerprint string) ([]approvals.Held, error)
}

func (s *Server) approvalRoutes() {
	s.mux.Handle("GET /api/v1/held-tools", handle(s.heldTools, http.StatusOK))
	s.mux.Handle("POST /api/v1/servers/{name}/approve", handle(s.approveTools, http.StatusOK))
}

func (s *Server) approvalsOrErr() (Approvals, error) {
	if s.approvals == nil {
		return nil, errorf(http.StatusServiceUnavailable, "tool approvals are not available in this daemon")
	}
	return s.approvals, nil
}

func (s *Server) heldTools(r *http.Request) ([]wire.HeldTool, error) {
	a, err := s.approvalsOrErr()
	if err != nil {
		return nil, err
	}
	server := r.URL.Query().Get("server")
	if server != "" {
		if _, ok := s.cfg.Current().Servers[server]; !ok {
			return nil, errorf(http.StatusNotFound, "unknown server %q", server)
		}
	}
	out := []wire.HeldTool{}
	for _, h := range a.Held() {
		if server == "" || h.Server == server {
			out = append(out, heldTool(h))
		}
	}
	return out, nil
}

func (s *Server) approveTools(r *http.Request) (wire.ApproveResult, error) {
	a, err := s.approvalsOrErr()
	if err != nil {
		return wire.ApproveResult{}, err
	}
	// Strict: {"tols": "x"} must not approve every held tool.
	var req wire.ApproveRequest
	if err := decodeStrictBody(r, &req); err != nil {
		return wire.ApproveResult{}, err
	}
	name := r.PathValue("name")
	if _, ok := s.cfg.Current().Servers[name]; !ok {
		return wire.ApproveResult{}, errorf(http.StatusNotFound, "unknown server %q", name)
	}
	done, err := a.Approve(name, req.Tool, req.Fingerprint)
	switch {
	case errors.Is(err, approvals.ErrNotHeld):
		return wire.ApproveResult{}, errorf(http.StatusNotFound, "%v", err)
	case errors.Is(err, approvals.ErrStale):
		return wire.ApproveResult{}, errorf(http.StatusConflict, "%v", err)
	case err != nil:
		return wire.ApproveResult{}, err
	}
	out := wire.ApproveResult{Approved: []wire.HeldTool{}}
	for _, h := range done {
		out.Approved = append(out.Approved, heldTool(h))
	}
	return out, nil
}

func heldTool(h approvals.Held) wire.HeldTool {
	out := wire.HeldTool{Server: h.Server, Tool: h.Tool, Change: h.Change, Reason: h.Reason(), Message: h.Message(),
		Listed: toolVersion(h.Listed)}
	var old []byte
	if h.Approved != nil {
		v := toolVersion(*h.Approved)
		out.Approved = &v
		old = diffText(v)
	}
	out.Diff = clients.Diff(h.Server+"/"+h.Tool, old, diffText(out.Listed))
	return out
}

// diffText is a version as the diff shows it: the description, then the
// input schema as indented JSON.
func diffText(v wire.ToolVersion) []byte {
	var b bytes.Buffer
	b.WriteString("description:\n")
	if v.Description != "" {
		b.WriteString(strings.TrimSuffix(v.Description, "\n") + "\n")
	}
	b.WriteString("\ninputSchema:\n")
	if err := json.Indent(&b, v.InputSchema, "", "  "); err != nil || len(v.InputSchema) == 0 {
		b.WriteString("(none)")
	}
	b.WriteString("\n")
	return b.Bytes()
}

func toolVersion(v approvals.Version) wire.ToolVersion {
	return wire.ToolVersion{Fingerprint: v.Fingerprint, Description: v.Description, InputSchema: v.InputSchema, Time: v.Time, How: v.How}
}
