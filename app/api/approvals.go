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

// Approvals is what the API needs of the tool approvals: an
// *approvals.Policy, which records each approval (in the daemon, in the
// history and on the feed) and makes the approved tools visible at once.
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
	out := wire.HeldTool{Server: h.Server, Kind: h.Kind, Tool: h.Tool, Change: h.Change, Reason: h.Reason(), Message: h.Message(),
		Listed: toolVersion(h.Listed)}
	var old []byte
	if h.Approved != nil {
		v := toolVersion(*h.Approved)
		out.Approved = &v
		old = diffText(h.Kind, v)
	}
	label := h.Server + "/" + h.Tool
	if h.Kind != approvals.KindTool {
		label = h.Server + "/" + h.Kind + "s/" + h.Tool
	}
	out.Diff = clients.Diff(label, old, diffText(h.Kind, out.Listed))
	out.Findings = []wire.Finding{}
	for _, f := range h.Listed.Findings {
		out.Findings = append(out.Findings, wire.Finding{Severity: f.Severity.String(), Rule: f.Rule, Field: f.Field,
			Start: f.Start, End: f.End, Quote: f.Quote, Message: f.Message, Line: f.String()})
	}
	return out
}

// diffText is a version as the diff shows it: the title when there is
// one, the description, the input schema as indented JSON, then the
// output schema and annotations when there are some (a tool without them
// diffs as it did before they were fingerprinted).
func diffText(kind string, v wire.ToolVersion) []byte {
	var b bytes.Buffer
	if v.Title != "" {
		b.WriteString("title: " + v.Title + "\n\n")
	}
	b.WriteString("description:\n")
	if v.Description != "" {
		b.WriteString(strings.TrimSuffix(v.Description, "\n") + "\n")
	}
	writeJSON := func(name string, data json.RawMessage, always bool) {
		if len(data) == 0 && !always {
			return
		}
		b.WriteString("\n" + name + ":\n")
		if err := json.Indent(&b, data, "", "  "); err != nil || len(data) == 0 {
			b.WriteString("(none)")
		}
		b.WriteString("\n")
	}
	// What stands in a prompt's or template's input schema's place.
	switch kind {
	case approvals.KindPrompt:
		writeJSON("arguments", v.InputSchema, true)
	case approvals.KindTemplate:
		writeJSON("name and mimeType", v.InputSchema, true)
	default:
		writeJSON("inputSchema", v.InputSchema, true)
	}
	writeJSON("outputSchema", v.OutputSchema, false)
	writeJSON("annotations", v.Annotations, false)
	return b.Bytes()
}

func toolVersion(v approvals.Version) wire.ToolVersion {
	return wire.ToolVersion{Fingerprint: v.Fingerprint, Title: v.Title, Description: v.Description, InputSchema: v.InputSchema,
		OutputSchema: v.OutputSchema, Annotations: v.Annotations, Time: v.Time, How: v.How}
}
