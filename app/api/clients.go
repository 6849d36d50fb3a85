package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/app/tiers"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/clients"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/redact"
	"github.com/switchboardhq/switchboard/app/tokens"
	"github.com/switchboardhq/switchboard/supervisor"
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
	// Home is the daemon's data directory when it is not the default one:
	// the bridge entry names it (`connect --home DIR`) so that the bridge
	// reaches this daemon. Empty for the default directory.
	Home string
	// OpenApp opens a deep link of scheme on the user's desktop (an
	// offered install link the caller asked the daemon to open); nil
	// opens none.
	OpenApp func(ctx context.Context, link, scheme string) error
}

const maskedSecret = "••••••"

func (s *Server) clientRoutes() {
	s.mux.Handle("GET /api/v1/clients", handle(s.listClients, http.StatusOK))
	s.mux.Handle("POST /api/v1/clients/{id}/plan", handle(s.planClient, http.StatusOK))
	s.mux.Handle("POST /api/v1/clients/{id}/apply", handle(s.applyClient, http.StatusOK))
	s.mux.Handle("POST /api/v1/clients/{id}/import/plan", handle(s.planImport, http.StatusOK))
	s.mux.Handle("POST /api/v1/clients/{id}/import/apply", handle(s.applyImport, http.StatusOK))
	s.mux.Handle("GET /api/v1/clients/{id}/backups", handle(s.listBackups, http.StatusOK))
	s.mux.Handle("POST /api/v1/clients/{id}/restore/plan", handle(s.planRestore, http.StatusOK))
	s.mux.Handle("POST /api/v1/clients/{id}/restore/apply", handle(s.applyRestore, http.StatusOK))
	s.mux.Handle("POST /api/v1/clients/{id}/offer", handle(s.offerClient, http.StatusOK))
}

// offerClient builds the install link of a client that keeps no file
// Switchboard may edit (Cherry Studio), with the client's own token
// (issued now, bound to the profile asked for): the caller opens it for
// the user, who confirms in the app. Nothing is written, and the client
// is never reported connected.
func (s *Server) offerClient(r *http.Request) (wire.ClientOffer, error) {
	co, err := s.clientsOn()
	if err != nil {
		return wire.ClientOffer{}, err
	}
	c, err := lookupClient(r)
	if err != nil {
		return wire.ClientOffer{}, err
	}
	var req wire.ClientOfferRequest
	if err := decodeBody(r, &req); err != nil {
		return wire.ClientOffer{}, err
	}
	if c.Remote != clients.DeepLink {
		return wire.ClientOffer{}, errorf(http.StatusBadRequest, "%s keeps a configuration file: connect it (POST .../plan, then .../apply) instead", c.Name)
	}
	if err := s.checkProfileChange(wire.ClientChange{Action: "connect", Profile: req.Profile}); err != nil {
		return wire.ClientOffer{}, err
	}
	tok, err := s.tokens.EnsureClient(c.ID)
	if err != nil {
		return wire.ClientOffer{}, err
	}
	o, err := clients.OfferLink(c, clients.Connect{URL: co.GatewayURL, Token: tok.Secret, Profile: req.Profile})
	if err != nil {
		return wire.ClientOffer{}, errorf(http.StatusUnprocessableEntity, "%v", err)
	}
	if err := s.bindClient(c, req.Profile); err != nil {
		return wire.ClientOffer{}, err
	}
	s.log.Info("client offered an install link", "client", c.ID, "profile", req.Profile)
	out := wire.ClientOffer{Client: c.ID, Link: o.Link, Entry: o.Entry, Note: clients.OfferNote(c)}
	if req.Open {
		scheme, _, _ := strings.Cut(o.Link, ":")
		switch {
		case co.OpenApp == nil:
			out.OpenError = "this daemon opens no links: open it yourself"
		default:
			if err := co.OpenApp(r.Context(), o.Link, scheme); err != nil {
				out.OpenError = err.Error()
			} else {
				out.Opened = true
			}
		}
	}
	return out, nil
}

func (s *Server) clientsOn() (ClientsOptions, error) {
	if _, err := available(s.clients.Editor, "client configs are"); err != nil {
		return ClientsOptions{}, err
	}
	return s.clients, nil
}

// clientEnv is the environment the request's clients live in: the
// daemon's, with the VS Code workspace of ?workspace= (an absolute path of
// an existing folder).
func (s *Server) clientEnv(r *http.Request) (ClientsOptions, clients.Env, error) {
	co, err := s.clientsOn()
	if err != nil {
		return co, clients.Env{}, err
	}
	env := co.Env
	ws := r.URL.Query().Get("workspace")
	if ws == "" {
		return co, env, nil
	}
	if !filepath.IsAbs(ws) {
		return co, env, errorf(http.StatusBadRequest, "invalid workspace %s: the folder must be an absolute path", quote(ws))
	}
	fi, err := os.Stat(ws)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return co, env, errorf(http.StatusBadRequest, "invalid workspace %s: no such folder", quote(ws))
	case err != nil:
		return co, env, errorf(http.StatusBadRequest, "invalid workspace %s: %v", quote(ws), err)
	case !fi.IsDir():
		return co, env, errorf(http.StatusBadRequest, "invalid workspace %s: not a folder", quote(ws))
	}
	env.Workspace = filepath.Clean(ws)
	return co, env, nil
}

// lookupClient finds the client named by the path's {id}.
func lookupClient(r *http.Request) (clients.Client, error) {
	c, ok := clients.Lookup(r.PathValue("id"))
	if !ok {
		var ids []string
		for _, c := range clients.Table {
			ids = append(ids, c.ID)
		}
		return c, errorf(http.StatusNotFound, "unknown client %q: one of %s", r.PathValue("id"), strings.Join(ids, ", "))
	}
	return c, nil
}

// viewOf returns the client's view as Detect sees it now.
func (s *Server) viewOf(co ClientsOptions, env clients.Env, id string) (wire.ClientView, error) {
	for _, st := range co.Editor.Detect(env) {
		if st.Client.ID == id {
			return s.withOffered(s.withToolCount(s.withTokenState(clientView(st), st, co), st.Client)), nil
		}
	}
	return wire.ClientView{}, errorf(http.StatusNotFound, "unknown client %q", id)
}

func (s *Server) listClients(r *http.Request) ([]wire.ClientView, error) {
	co, env, err := s.clientEnv(r)
	if err != nil {
		return nil, err
	}
	var out []wire.ClientView
	for _, st := range co.Editor.Detect(env) {
		out = append(out, s.withOffered(s.withToolCount(s.withTokenState(clientView(st), st, co), st.Client)))
	}
	return out, nil
}

// withOffered marks a client that keeps no file (Cherry Studio) as
// offered once it has a token of its own: its install link was made.
func (s *Server) withOffered(v wire.ClientView) wire.ClientView {
	if v.Offer {
		v.Offered = slices.ContainsFunc(s.tokens.List(), func(t tokens.Token) bool { return t.Label == v.ID })
	}
	return v
}

// withTokenState checks the tokens Switchboard's entries in the client's
// file carry: when one is revoked or unknown, the client is not connected
// (every request it makes gets 401) but needs connecting again, which
// writes a new token. A bridge entry for another data directory
// (connect --home) carries that directory's token, and a value that is
// not a literal token (a ${VAR} the client expands) cannot be checked:
// both are left alone.
func (s *Server) withTokenState(v wire.ClientView, st clients.Status, co ClientsOptions) wire.ClientView {
	if !v.Connected {
		return v
	}
	for _, t := range st.Tokens {
		if t.Bridge && filepath.Clean(t.Home) != filepath.Clean(co.Home) {
			continue
		}
		if strings.ContainsAny(t.Secret, "${}%") {
			continue
		}
		if _, ok := s.tokens.Known(t.Secret); ok {
			continue
		}
		v.Connected, v.TokenRevoked = false, true
		// The profile went with the token: the entry still names it, and
		// connecting again without it would point the client at /mcp.
		again := st.Client.ID
		if t.Profile != "" {
			v.Profile = t.Profile
			again += " --profile " + t.Profile
		}
		v.Warning = fmt.Sprintf("its Switchboard entry %s carries a token that was revoked (or is unknown to this Switchboard): "+
			"every request it makes is refused; connect it again to give it a new token (clients connect %s)", quote(t.Entry), again)
		return v
	}
	return v
}

func clientView(st clients.Status) wire.ClientView {
	v := wire.ClientView{ID: st.Client.ID, Name: st.Client.Name, Path: st.Path, Installed: st.Installed,
		Connected: st.Connected, Servers: []wire.ClientEntry{}, Offer: st.Client.Remote == clients.DeepLink}
	if st.Connected {
		v.Caveat = st.Client.Caveat
	}
	switch {
	case errors.Is(st.Err, clients.ErrNoWorkspace):
		v.NeedsWorkspace = true
	case st.Err != nil:
		v.Error = st.Err.Error()
	}
	for _, e := range st.Entries {
		e.Env = maskSecrets(e.Env)
		e.Headers = maskSecrets(e.Headers)
		e.Args = maskArgs(e.Args)
		e.URL = redact.Values(e.URL)
		v.Servers = append(v.Servers, wire.ClientEntry(e))
	}
	return v
}

// maskArgs hides credentials given as arguments: a value with the shape of
// one (sk-…, ghp_…), and the value after a flag whose name looks secret
// (--api-key KEY, --token=T).
func maskArgs(args []string) []string {
	if len(args) == 0 {
		return args
	}
	out := make([]string, len(args))
	for i, a := range args {
		flag, _, inline := strings.Cut(a, "=")
		switch {
		case inline && strings.HasPrefix(flag, "-") && clients.LooksSecret(flag):
			a = flag + "=" + maskedSecret
		case i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && clients.LooksSecret(args[i-1]) &&
			!strings.HasPrefix(a, "-"):
			a = maskedSecret
		default:
			a = redact.Values(a)
		}
		out[i] = a
	}
	return out
}

// maskSecrets hides the values of variables and headers that look secret
// by name (X-Api-Key, GITHUB_TOKEN, …) or by shape (sk-…, a JWT, …); see
// clients.IsSecret.
func maskSecrets(m map[string]string) map[string]string {
	return clients.MaskSecrets(m, maskedSecret)
}

// clientRequest reads a plan or apply request: the client, its
// environment and the change asked for.
func (s *Server) clientRequest(r *http.Request) (ClientsOptions, clients.Env, clients.Client, wire.ClientChange, error) {
	var change wire.ClientChange
	co, env, err := s.clientEnv(r)
	if err != nil {
		return co, env, clients.Client{}, change, err
	}
	c, err := lookupClient(r)
	if err != nil {
		return co, env, c, change, err
	}
	if err := decodeBody(r, &change); err != nil {
		return co, env, c, change, err
	}
	switch {
	case change.Action != "connect" && change.Action != "disconnect":
		return co, env, c, change, errorf(http.StatusBadRequest, "invalid action %q: connect or disconnect", change.Action)
	case change.Revoke && change.Action != "disconnect":
		return co, env, c, change, errorf(http.StatusBadRequest, "revoke goes with disconnect, not %q", change.Action)
	case change.Profile != "" && change.Action != "connect":
		return co, env, c, change, errorf(http.StatusBadRequest, "profile goes with connect, not %q", change.Action)
	case change.MaxTier != "" && change.Action != "connect":
		return co, env, c, change, errorf(http.StatusBadRequest, "maxTier goes with connect, not %q", change.Action)
	}
	if change.MaxTier != "" {
		if _, err := tiers.Parse(change.MaxTier); err != nil {
			return co, env, c, change, errorf(http.StatusUnprocessableEntity, "maxTier: %v", err)
		}
	}
	if err := s.checkProfileChange(change); err != nil {
		return co, env, c, change, err
	}
	if change.Action == "connect" {
		// An entry for a name that is not configured would be written,
		// and reported connected, for an endpoint that answers 404.
		servers := s.cfg.Current().Servers
		for _, name := range change.Servers {
			if _, ok := servers[name]; !ok {
				return co, env, c, change, errorf(http.StatusUnprocessableEntity,
					"unknown server %q: it is not in config.json, so it cannot have an entry of its own", name)
			}
		}
	}
	return co, env, c, change, nil
}

// clientChange is what change does to client c's file. Connecting issues
// (or reuses) the client's own token, so that history knows it and it can
// be revoked alone.
func (s *Server) clientChange(co ClientsOptions, c clients.Client, change wire.ClientChange) (clients.Change, error) {
	if change.Action == "disconnect" {
		return clients.Disconnect{Force: change.Force}, nil
	}
	tok, err := s.tokens.EnsureClient(c.ID)
	if err != nil {
		return nil, err
	}
	return clients.Connect{URL: co.GatewayURL, Token: tok.Secret, BinaryPath: co.BinaryPath, PerServer: change.Servers,
		Profile: change.Profile, Home: co.Home, TakeOver: change.Replace, Force: change.Force}, nil
}

// planError is the answer to a change that cannot be planned.
func planError(err error) error {
	if errors.Is(err, clients.ErrReadOnly) {
		return errorf(http.StatusConflict, "%s", editorMessage(err))
	}
	return errorf(http.StatusUnprocessableEntity, "%s", editorMessage(err))
}

// editorMessage is the message of an error of the clients package's Editor,
// with the flag of `switchboard clients` that gets past it: the package
// says what stopped a change and leaves how to ask for it anyway (a field
// of the change) to its caller. The API's answers have always named the
// command line's flags, and the command line prints them as they are, so
// the wording is added here, where the typed error is found, in place of
// the error's own message wherever the chain holds it.
func editorMessage(err error) string {
	return editorMessageFor(err, true)
}

// importEditorMessage is editorMessage for `clients import --replace`,
// which has no --force (wire.ImportRequest has no Force; the plan it makes
// never forces): a read-only file is left to the user to make writable,
// and the import to be run again.
func importEditorMessage(err error) string {
	return editorMessageFor(err, false)
}

func editorMessageFor(err error, canForce bool) string {
	msg := err.Error()
	if conflict, ok := errors.AsType[*clients.ConflictError](err); ok {
		msg = strings.Replace(msg, conflict.Error(), conflict.Error()+" (rename it, or replace it: --replace on the command line)", 1)
	}
	if readOnly, ok := errors.AsType[*clients.ReadOnlyError](err); ok {
		advice := ", or pass --force to change it anyway"
		if !canForce {
			advice = " and import again"
		}
		msg = strings.Replace(msg, readOnly.Error(), readOnly.Error()+advice, 1)
	}
	if chmod, ok := errors.AsType[*clients.MakeWritableError](err); ok {
		msg = strings.Replace(msg, chmod.Error(), fmt.Sprintf("making %s writable (--force): %v", chmod.Dir, chmod.Err), 1)
	}
	return msg
}

// skipMessage is why import leaves an entry alone, with, for a server
// that can still be added by hand, the command line that adds it: the
// clients package says what is missing in its own terms (SkippedEntry's
// ByHand) and the API names the flags, as editorMessage does.
func skipMessage(sk clients.SkippedEntry) string {
	switch sk.ByHand {
	case clients.ByHandSecretHeader:
		return sk.Reason + " (on the command line: `switchboard install --url URL --name NAME --secret-header NAME=VALUE`)"
	case clients.ByHandBearerToken:
		return sk.Reason + " (on the command line: `switchboard install --url URL --name NAME --secret-header Authorization=\"Bearer …\"`)"
	case clients.ByHandValue:
		return sk.Reason + " (on the command line: `switchboard install --url URL --name NAME`, with --header or --secret-header)"
	}
	return sk.Reason
}

func conflicts(cs []clients.Conflict) []wire.Conflict {
	var out []wire.Conflict
	for _, c := range cs {
		out = append(out, wire.Conflict(c))
	}
	return out
}

func planView(p *clients.Plan) wire.ClientPlan {
	return wire.ClientPlan{Client: p.Client.ID, Path: p.Path, Hash: p.Hash, Diff: p.Diff, Changed: p.Changed(),
		Remove: p.Remove && p.Changed(), Conflicts: conflicts(p.Conflicts), Kept: p.Kept, Notes: p.Notes}
}

// planToolCount tells, in a connect's plan, how many tools the endpoint it
// points the client at lists and the client's limit: the user sees that
// the client would get too many before the file is written, not after.
func (s *Server) planToolCount(v *wire.ClientPlan, c clients.Client, profile string) {
	v.ToolLimit, v.ToolLimitSource = c.ToolLimit, c.ToolLimitSource
	n, ok := s.toolCount(profile)
	if !ok {
		return
	}
	v.Tools = &n
	if c.ToolLimit > 0 && n > c.ToolLimit {
		where := "/mcp"
		if profile != "" {
			where = "profile " + quote(profile)
		}
		v.ToolWarning = fmt.Sprintf("%s would see %d tools on %s, more than the %d it takes", c.Name, n, where, c.ToolLimit)
	}
}

func (s *Server) planClient(r *http.Request) (wire.ClientPlan, error) {
	co, env, c, change, err := s.clientRequest(r)
	if err != nil {
		return wire.ClientPlan{}, err
	}
	if c.Remote == clients.DeepLink {
		return offerPlan(c, change)
	}
	cc, err := s.clientChange(co, c, change)
	if err != nil {
		return wire.ClientPlan{}, err
	}
	p, err := co.Editor.Plan(c, env, cc)
	if err != nil {
		return wire.ClientPlan{}, planError(err)
	}
	v := planView(p)
	if change.Action == "connect" {
		v.Rebind = s.clientProfile(c.ID) != change.Profile
		s.planToolCount(&v, c, change.Profile)
		v.Caveat = c.Caveat
	}
	return v, nil
}

// offerPlan is the plan of a client that keeps no file (Cherry Studio):
// connect is an offered link (POST .../offer), disconnect is done in the
// app.
func offerPlan(c clients.Client, change wire.ClientChange) (wire.ClientPlan, error) {
	switch {
	case change.Action == "disconnect":
		return wire.ClientPlan{}, errorf(http.StatusUnprocessableEntity,
			"%s keeps its servers in its own database, which Switchboard does not edit: remove %q in %s's MCP settings, "+
				"and revoke its token (tokens revoke %s) so that nothing holding it can call Switchboard", c.Name, clients.EntryName, c.Name, c.ID)
	case len(change.Servers) > 0:
		return wire.ClientPlan{}, errorf(http.StatusUnprocessableEntity, "%s is offered one entry, %q; a server's own entry is not offered", c.Name, clients.EntryName)
	case change.Replace || change.Force || change.MaxTier != "":
		return wire.ClientPlan{}, errorf(http.StatusUnprocessableEntity, "%s keeps no file: --replace, --force and --max-tier do not apply to its offered link", c.Name)
	}
	return wire.ClientPlan{Client: c.ID, Offer: true, Notes: []string{"nothing is written: " + clients.ErrNoFile.Error() +
		" (POST /api/v1/clients/" + c.ID + "/offer); it is then shown as offered, never as connected"}}, nil
}

// applyClient plans the change again and applies it, serialized with every
// other change of the same file: a plan the user saw that only
// Switchboard's own writes made outdated (two connects at once) is planned
// again and applied, not refused.
func (s *Server) applyClient(r *http.Request) (wire.ClientApplied, error) {
	co, env, c, change, err := s.clientRequest(r)
	if err != nil {
		return wire.ClientApplied{}, err
	}
	if c.Remote == clients.DeepLink {
		if _, err := offerPlan(c, change); err != nil {
			return wire.ClientApplied{}, err
		}
		return wire.ClientApplied{}, errorf(http.StatusUnprocessableEntity, "%s: %v: POST /api/v1/clients/%s/offer", c.Name, clients.ErrNoFile, c.ID)
	}
	if change.Hash == "" {
		return wire.ClientApplied{}, errorf(http.StatusBadRequest, "missing hash: apply the plan you were shown (POST .../plan first)")
	}
	cc, err := s.clientChange(co, c, change)
	if err != nil {
		return wire.ClientApplied{}, err
	}
	p, err := co.Editor.Do(c, env, cc, change.Hash)
	switch {
	case p == nil && err != nil:
		return wire.ClientApplied{}, planError(err)
	case errors.Is(err, clients.ErrChanged):
		return wire.ClientApplied{}, errorf(http.StatusConflict, "%s changed since the plan was shown; look at the new plan first", p.Path)
	case errors.Is(err, clients.ErrConflict):
		return wire.ClientApplied{}, errorf(http.StatusConflict, "%s", editorMessage(err))
	case err != nil:
		return wire.ClientApplied{}, errorf(http.StatusConflict, "writing %s: %s", p.Path, editorMessage(err))
	}
	if p.Changed() {
		s.journalClientFile(p)
	}
	if change.Action == "connect" {
		// After the file is written: a token bound before would be
		// refused on the endpoint the file still names.
		if err := s.bindClient(c, change.Profile); err != nil {
			return wire.ClientApplied{}, err
		}
		if err := s.capClient(c, tiers.Tier(change.MaxTier)); err != nil {
			return wire.ClientApplied{}, err
		}
	}
	out := wire.ClientApplied{}
	if out.ClientView, err = s.viewOf(s.clients, env, c.ID); err != nil {
		return out, err
	}
	if change.Action == "disconnect" {
		out.TokenLabel = c.ID
		if change.Revoke {
			gone, err := s.tokens.RevokeLabel(c.ID)
			if err != nil && !errors.Is(err, tokens.ErrNotFound) {
				return out, fmt.Errorf("%s is disconnected, but its token was not revoked: %w", c.Name, err)
			}
			out.Revoked = len(gone)
			if len(gone) > 0 {
				s.log.Info("revoked tokens", "label", c.ID, "count", len(gone))
			}
		} else {
			out.TokenValid = slices.ContainsFunc(s.tokens.List(), func(t tokens.Token) bool { return t.Label == c.ID })
		}
	}
	return out, nil
}

// importPlan is an ImportPlan with what applying it needs: the secret
// values and the client file's plan.
type importPlan struct {
	view    wire.ImportPlan
	secrets map[string]map[string]string // server → variable → value, for wire.ImportAdd
	configs map[string]config.Server     // server → its entry, for every server of the view
	file    *clients.Plan                // nil without Replace
	env     clients.Env
	skip    map[string]string // entry → why it cannot be imported
}

func (s *Server) planImport(r *http.Request) (wire.ImportPlan, error) {
	var req wire.ImportRequest
	if err := decodeBody(r, &req); err != nil {
		return wire.ImportPlan{}, err
	}
	ip, err := s.importPlan(r, req)
	if err != nil {
		return wire.ImportPlan{}, err
	}
	return ip.view, nil
}

// importPlan reads the client's servers, merges them with Switchboard's
// (see clients.MergeImports) and, with Replace, plans the client's file.
func (s *Server) importPlan(r *http.Request, req wire.ImportRequest) (*importPlan, error) {
	co, env, err := s.clientEnv(r)
	if err != nil {
		return nil, err
	}
	c, err := lookupClient(r)
	if err != nil {
		return nil, err
	}
	entries, fileHash, err := clients.ReadHashed(c, env)
	if err != nil {
		return nil, errorf(http.StatusUnprocessableEntity, "%v", err)
	}
	path, _ := c.Path(env)
	ip := &importPlan{env: env, secrets: map[string]map[string]string{}, configs: map[string]config.Server{},
		view: wire.ImportPlan{Client: c.ID, Path: path, Replace: req.Replace, Servers: []wire.ImportedServer{}, Skipped: []wire.SkippedEntry{}}}

	importable, skipped := clients.EntriesToImport(c, entries, co.GatewayURL, os.LookupEnv)
	ip.skip = map[string]string{}
	for _, sk := range skipped {
		ip.skip[sk.Name] = skipMessage(sk)
	}
	var chosen []clients.ImportEntry
	for _, ie := range importable {
		sc := importedConfig(ie)
		if err := checkImported(ie.Name, sc); err != nil {
			ip.skip[ie.Name] = err.Error()
			continue
		}
		if len(req.Servers) == 0 || slices.Contains(req.Servers, ie.Name) {
			chosen = append(chosen, ie)
		}
	}
	for _, name := range req.Servers {
		if reason, ok := ip.skip[name]; ok {
			return nil, errorf(http.StatusBadRequest, "cannot import %q of %s: %s", name, c.Name, reason)
		}
		if !slices.ContainsFunc(entries, func(e clients.Entry) bool { return e.Name == name }) {
			return nil, errorf(http.StatusBadRequest, "%s has no server %q in %s", c.Name, name, path)
		}
	}
	for _, e := range entries {
		if !slices.ContainsFunc(chosen, func(x clients.ImportEntry) bool { return x.Name == e.Name }) {
			reason, ok := ip.skip[e.Name]
			if !ok {
				reason = "not selected"
			}
			ip.view.Skipped = append(ip.view.Skipped, wire.SkippedEntry{Entry: e.Name, Reason: reason})
		}
	}

	for _, m := range clients.MergeImports(chosen, s.existingServers()) {
		sc := importedConfig(m.Entry)
		vals := secretValues(m.Entry)
		is := wire.ImportedServer{Entry: m.Entry.Name, Name: m.Name, Action: wire.ImportAdd, Renamed: m.Renamed(), Server: serverConfig(sc)}
		if m.Same != "" {
			is.Action = wire.ImportExists
		} else if len(vals) > 0 {
			if s.secrets == nil {
				return nil, errorf(http.StatusServiceUnavailable, "cannot import %q: it has secrets (%s) and this daemon has no secret store",
					m.Entry.Name, strings.Join(slices.Sorted(maps.Keys(vals)), ", "))
			}
			ip.secrets[m.Name] = vals
		}
		ip.view.Servers = append(ip.view.Servers, is)
		ip.configs[m.Name] = sc
	}

	hashed := fileHash
	if req.Replace {
		var remove []string
		for _, is := range ip.view.Servers {
			remove = append(remove, is.Entry)
		}
		tok, err := s.tokens.EnsureClient(c.ID)
		if err != nil {
			return nil, err
		}
		p, err := co.Editor.Plan(c, env, clients.Replace{Remove: remove,
			Connect: clients.Connect{URL: co.GatewayURL, Token: tok.Secret, BinaryPath: co.BinaryPath, Home: co.Home,
				Profile: tok.Profile}}) // the client keeps its profile
		if err != nil {
			return nil, errorf(http.StatusUnprocessableEntity, "%s", importEditorMessage(err))
		}
		if p.Hash != fileHash {
			return nil, errorf(http.StatusConflict, "%s changed while the import was planned; plan again", path)
		}
		if len(p.Conflicts) > 0 {
			return nil, errorf(http.StatusConflict, "%s already has %s, which Switchboard did not write: rename it before "+
				"replacing the imported servers with Switchboard's entry", path, p.Conflicts[0])
		}
		ip.file = p
		ip.view.Diff, ip.view.Changed = p.Diff, p.Changed()
		// The token is part of what is written: a new token (the old one
		// revoked) is a new plan.
		hashed += "\x00" + p.Diff + "\x00" + hashOf([]byte(tok.Secret))
	}
	public, err := json.Marshal(ip.view.Servers)
	if err != nil {
		return nil, err
	}
	ip.view.Hash = hashOf([]byte(fmt.Sprintf("%s\x00%t\x00%s", hashed, req.Replace, public)))
	return ip, nil
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// importedConfig is the config entry of an imported server, its secrets
// (see secretValues) named but not held: a secret env variable by its
// name in SecretEnv, a secret header in SecretHeaders under a secret of
// the same name.
func importedConfig(ie clients.ImportEntry) config.Server {
	sc := importedServer(ie)
	if ie.Disabled {
		// Off in the client's file: added off, for the user to turn on.
		off := false
		sc.Enabled = &off
	}
	return sc
}

func importedServer(ie clients.ImportEntry) config.Server {
	if ie.Remote() {
		sc := config.Server{URL: ie.URL, Transport: ie.Transport}
		for _, h := range ie.Headers {
			if h.Secret {
				if sc.SecretHeaders == nil {
					sc.SecretHeaders = map[string]string{}
				}
				sc.SecretHeaders[h.Name] = h.Name
				continue
			}
			if sc.Headers == nil {
				sc.Headers = map[string]string{}
			}
			sc.Headers[h.Name] = h.Value
		}
		return sc
	}
	sc := config.Server{Command: ie.Command, Args: ie.Args, Cwd: ie.Cwd,
		// The client ran the server as soon as it started; a process
		// kept ready does the same for every client.
		Pool: config.Pool{Min: 1}}
	for _, v := range ie.Env {
		if v.Secret {
			sc.SecretEnv = append(sc.SecretEnv, v.Name)
			continue
		}
		if sc.Env == nil {
			sc.Env = map[string]string{}
		}
		sc.Env[v.Name] = v.Value
	}
	return sc
}

// secretValues are the values of an imported server's secrets, by the
// secret's name (see importedConfig), for the secret store.
func secretValues(ie clients.ImportEntry) map[string]string {
	vals := map[string]string{}
	for _, v := range slices.Concat(ie.Env, ie.Headers) {
		if v.Secret {
			vals[v.Name] = v.Value
		}
	}
	return vals
}

// checkImported validates an imported server's entry as config.json
// would, so that one the config refuses (an http:// URL to another
// machine, a header the transport sets itself) is skipped with the
// validator's reason instead of failing the whole import.
func checkImported(name string, sc config.Server) error {
	cfg := config.Default()
	// The name does not matter here (MergeImports picks one that is
	// valid); a fixed valid one keeps the field names short.
	cfg.Servers = map[string]config.Server{"imported": sc}
	if err := cfg.Validate(); err != nil {
		return errors.New(strings.Replace(err.Error(), "servers.imported.", "", 1))
	}
	return nil
}

// existingServers are the servers of the config in force, sorted by name,
// with their secrets read from the store so that an import of the same
// server (secret included) is recognized.
func (s *Server) existingServers() []clients.Existing {
	cfg := s.cfg.Current()
	var out []clients.Existing
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		sc := cfg.Servers[name]
		if sc.IsRemote() {
			headers := maps.Clone(sc.Headers)
			if headers == nil {
				headers = map[string]string{}
			}
			keys := slices.Sorted(maps.Values(sc.SecretHeaders))
			vals := s.resolveForMatch(name, keys)
			for h, key := range sc.SecretHeaders {
				headers[h] = vals[key]
			}
			out = append(out, clients.Existing{Name: name, URL: sc.URL, Transport: sc.Transport, Headers: headers})
			continue
		}
		env := maps.Clone(sc.Env)
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, s.resolveForMatch(name, sc.SecretEnv))
		out = append(out, clients.Existing{Name: name, Command: sc.Command, Args: sc.Args, Env: env, Cwd: sc.Cwd})
	}
	return out
}

// resolveForMatch reads server's secrets named keys from the store, for
// comparing with imported values: a secret that cannot be read matches
// no imported value.
func (s *Server) resolveForMatch(server string, keys []string) map[string]string {
	if len(keys) == 0 {
		return nil
	}
	if s.secrets != nil {
		if vals, err := s.secrets.Resolve(server, keys); err == nil {
			return vals
		}
	}
	vals := map[string]string{}
	for _, k := range keys {
		vals[k] = "\x00unreadable secret"
	}
	return vals
}

// errImportRace is returned from the config update when the config changed
// between the plan and the update.
type errImportRace struct{ msg string }

func (e *errImportRace) Error() string { return e.msg }

func (s *Server) applyImport(r *http.Request) (wire.ImportResult, error) {
	var req wire.ImportRequest
	if err := decodeBody(r, &req); err != nil {
		return wire.ImportResult{}, err
	}
	if req.Hash == "" {
		return wire.ImportResult{}, errorf(http.StatusBadRequest, "missing hash: apply the plan you were shown (POST .../import/plan first)")
	}
	ip, err := s.importPlan(r, req)
	if err != nil {
		return wire.ImportResult{}, err
	}
	if req.Hash != ip.view.Hash {
		return wire.ImportResult{}, errorf(http.StatusConflict, "%s or Switchboard's servers changed since the plan was shown; look at the new plan first", ip.view.Path)
	}
	var adds []wire.ImportedServer
	for _, is := range ip.view.Servers {
		if is.Action == wire.ImportAdd {
			adds = append(adds, is)
		}
	}
	if len(adds) > 0 {
		// The secrets go first: the config update starts the servers,
		// which read them.
		stored, err := s.storeSecrets(ip.secrets)
		if err != nil {
			s.forgetSecrets(stored)
			return wire.ImportResult{}, err
		}
		_, err = s.cfg.Update(r.Context(), func(cfg *config.Config) error {
			if cfg.Servers == nil {
				cfg.Servers = map[string]config.Server{}
			}
			for _, is := range ip.view.Servers {
				_, taken := cfg.Servers[is.Name]
				switch {
				case is.Action == wire.ImportAdd && taken:
					return &errImportRace{fmt.Sprintf("a server named %q was added meanwhile; plan the import again", is.Name)}
				case is.Action == wire.ImportExists && !taken:
					return &errImportRace{fmt.Sprintf("server %q was removed meanwhile; plan the import again", is.Name)}
				case is.Action == wire.ImportAdd:
					cfg.Servers[is.Name] = ip.configs[is.Name]
				}
			}
			return nil
		})
		if err != nil {
			s.forgetSecrets(stored)
			if race, ok := errors.AsType[*errImportRace](err); ok {
				return wire.ImportResult{}, errorf(http.StatusConflict, "%s", race.msg)
			}
			if errors.Is(err, supervisor.ErrClosed) {
				return wire.ImportResult{}, updateError(err)
			}
			return wire.ImportResult{}, errorf(http.StatusBadRequest, "importing from %s: %v", ip.view.Client, err)
		}
		s.log.Info("imported servers from a client", "client", ip.view.Client, "added", len(adds), "servers", len(ip.view.Servers))
	}
	// The client's file last: if writing it fails, the servers are in
	// Switchboard and still in the client (nothing lost), and a new import
	// finds them the same and only rewrites the file.
	if ip.file != nil && ip.file.Changed() {
		if err := s.writeClientFile(ip.file); err != nil {
			return wire.ImportResult{}, errorf(http.StatusConflict,
				"the servers were imported, but %s was not rewritten: %s; plan the import again to replace them", ip.file.Path, importEditorMessage(err))
		}
	}
	v, err := s.viewOf(s.clients, ip.env, ip.view.Client)
	if err != nil {
		return wire.ImportResult{}, err
	}
	return wire.ImportResult{Servers: ip.view.Servers, Client: v}, nil
}

type storedSecret struct{ server, key string }

// storeSecrets puts the values in the secret store and returns what it
// stored, also on error, so that the caller can take it back.
func (s *Server) storeSecrets(vals map[string]map[string]string) ([]storedSecret, error) {
	var stored []storedSecret
	for _, server := range slices.Sorted(maps.Keys(vals)) {
		for _, key := range slices.Sorted(maps.Keys(vals[server])) {
			if err := s.secrets.Set(server, key, vals[server][key]); err != nil {
				return stored, fmt.Errorf("storing secret %s of server %q: %w", key, server, err)
			}
			stored = append(stored, storedSecret{server, key})
		}
	}
	return stored, nil
}

func (s *Server) forgetSecrets(stored []storedSecret) {
	for _, st := range stored {
		if err := s.secrets.Delete(st.server, st.key); err != nil {
			s.log.Warn("taking back a secret of a failed import", "server", st.server, "key", st.key, "err", err)
		}
	}
}

func (s *Server) listBackups(r *http.Request) ([]wire.BackupView, error) {
	co, _, err := s.clientEnv(r)
	if err != nil {
		return nil, err
	}
	c, err := lookupClient(r)
	if err != nil {
		return nil, err
	}
	bs, err := co.Editor.Backups(c.ID)
	if err != nil {
		return nil, err
	}
	out := []wire.BackupView{}
	for _, b := range bs {
		v := wire.BackupView{Name: b.Name(), Time: b.Time, Path: b.Path, Absent: b.Absent}
		if !b.Absent {
			fi, err := os.Stat(b.File)
			if err != nil {
				return nil, fmt.Errorf("backup %s of %s: %w", b.Name(), c.ID, err)
			}
			v.Size = fi.Size()
		}
		out = append(out, v)
	}
	return out, nil
}

func (s *Server) restorePlan(r *http.Request) (*clients.Plan, wire.RestoreRequest, clients.Env, error) {
	var req wire.RestoreRequest
	co, env, err := s.clientEnv(r)
	if err != nil {
		return nil, req, env, err
	}
	c, err := lookupClient(r)
	if err != nil {
		return nil, req, env, err
	}
	if err := decodeBody(r, &req); err != nil {
		return nil, req, env, err
	}
	if req.Backup == "" {
		return nil, req, env, errorf(http.StatusBadRequest, "missing backup: name one of GET /api/v1/clients/%s/backups", c.ID)
	}
	b, err := co.Editor.FindBackup(c.ID, req.Backup)
	if err != nil {
		return nil, req, env, errorf(http.StatusNotFound, "%v", err)
	}
	p, err := co.Editor.PlanRestore(c, env, b)
	if err != nil {
		return nil, req, env, errorf(http.StatusUnprocessableEntity, "%s", editorMessage(err))
	}
	return p, req, env, nil
}

func (s *Server) planRestore(r *http.Request) (wire.ClientPlan, error) {
	p, _, _, err := s.restorePlan(r)
	if err != nil {
		return wire.ClientPlan{}, err
	}
	return planView(p), nil
}

func (s *Server) applyRestore(r *http.Request) (wire.ClientView, error) {
	p, req, env, err := s.restorePlan(r)
	if err != nil {
		return wire.ClientView{}, err
	}
	if req.Hash == "" {
		return wire.ClientView{}, errorf(http.StatusBadRequest, "missing hash: apply the plan you were shown (POST .../restore/plan first)")
	}
	if req.Hash != p.Hash {
		return wire.ClientView{}, errorf(http.StatusConflict, "%s changed since the plan was shown; look at the new plan first", p.Path)
	}
	if err := s.writeClientFile(p); err != nil {
		return wire.ClientView{}, errorf(http.StatusConflict, "restoring %s: %s", p.Path, editorMessage(err))
	}
	s.log.Info("restored a client's config from its backup", "client", p.Client.ID, "backup", req.Backup)
	return s.viewOf(s.clients, env, p.Client.ID)
}

// writeClientFile applies p to the client's file and journals it.
func (s *Server) writeClientFile(p *clients.Plan) error {
	if err := s.clients.Editor.Apply(p); err != nil {
		return err
	}
	s.journalClientFile(p)
	return nil
}

// journalClientFile records in the journal that p was written.
func (s *Server) journalClientFile(p *clients.Plan) {
	what := "wrote"
	if p.Remove {
		what = "removed"
	}
	s.journal("", JournalClientConfig, fmt.Sprintf("%s %s's config %s", what, p.Client.Name, p.Path))
}
