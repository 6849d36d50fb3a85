// Package approvals keeps, per server, the version of each tool the user
// approved, and tells which of the tools a server lists now are new or
// changed since: the protection against a "rug pull", a server that
// changes what a tool says (its description is an instruction to the
// model) or takes after the user chose to trust it.
//
// A tool's version is its fingerprint (see [Fingerprint]: SHA-256 over the
// canonical JSON of its name, title, description, input and output schemas
// and annotations), kept with those fields themselves so that a change can
// be shown as a diff. The first list of a server the store has never seen
// is approved as a whole: that is the install (or, for a server configured
// before approvals existed, the migration). After that a tool that is new
// or whose fingerprint changed is held until [Store.Approve]. Whatever the
// list, a tool with a high-severity finding of app/toolscan (the caller
// scans; Tool.Findings) is held until approved, even in a first list or on
// a trusted server: Review is the one place that decides what holds.
//
// A [Policy] applies the store to what the servers list, as the gateway
// asks it (the daemon wires it as the gateway's ToolReviewer and the API's
// Approvals): it scans each list with app/toolscan before the store
// judges it, words why tools were approved or held, and reports each
// approval and newly held item ([Notice]) to whoever records and shows
// them, without knowing who (the daemon: the history and the live feed).
//
// Version 1 of the file fingerprinted the name, description and input
// schema only. Its approvals are migrated as their tools are listed: one
// whose old fingerprint still matches what is listed is approved again
// under the new one, silently, so that adding fields to the fingerprint
// holds nothing by itself.
//
// A server's prompts and resource templates are held the same way
// ([Store.ReviewItems]); the first list of each is approved as it is,
// so that a server approved before they were held keeps them.
//
// Everything lives in one JSON file in the data directory, approvals.json,
// mode 0600, written atomically; only the daemon writes it.
//
//	{
//	  "version": 2,
//	  "servers": {
//	    "demo": {
//	      "approved": {"echo": {"fingerprint": "sha256:…", "scheme": 2, "description": "…", "inputSchema": {…}, "time": "…", "how": "install"}},
//	      "held":     {"echo": {"fingerprint": "sha256:…", "scheme": 2, "description": "…", "inputSchema": {…}, "time": "…", "findings": […]}},
//	      "prompts":   {"approved": {"greet": {…}}, "held": {…}},
//	      "templates": {"approved": {"file:///{path}": {…}}}
//	    }
//	  }
//	}
package approvals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/app/atomicfile"
	"github.com/switchboardhq/switchboard/app/toolscan"
)

// FileName is the name of the approvals file inside the data directory.
const FileName = "approvals.json"

// fileVersion is the format this build writes; it reads 1 too (whose
// versions are all of fingerprint scheme 0).
const fileVersion = 2

// How a version of a tool came to be approved.
const (
	HowFirstList = "first-list" // the server's first list: its install, or the migration of a server configured before approvals existed
	HowUser      = "user"       // the user approved it (CLI, dashboard, tray)
	HowTrusted   = "trusted"    // the server's holdChangedTools is false
)

// A Version is one version of a tool: approved, or listed and held.
type Version struct {
	Fingerprint string `json:"fingerprint"`
	// Scheme is the fingerprint's scheme (fingerprintScheme); 0 is the
	// first one, of version 1 files, over name, description and input
	// schema only (the other fields are then not known).
	Scheme       int             `json:"scheme,omitempty"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"` // canonical JSON, as the two below
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	// Findings are the scanner's on this version, when it was listed.
	Findings []toolscan.Finding `json:"findings,omitempty"`
	// Time is when it was approved, or first listed and held.
	Time time.Time `json:"time"`
	// How says how an approved version was approved (How* constants);
	// empty for a held one.
	How string `json:"how,omitempty"`
}

// Kinds of change of a held tool. A change of several fields is their
// names joined as in a sentence: "description and schema", "title,
// annotations and output schema".
const (
	ChangeNew          = "new"         // the server did not list it when it was approved
	ChangeTitle        = "title"       // its title changed
	ChangeDescription  = "description" // its description changed
	ChangeSchema       = "schema"      // its input schema changed
	ChangeOutputSchema = "output schema"
	ChangeAnnotations  = "annotations" // readOnlyHint, destructiveHint, … or the annotations' title
	ChangeBoth         = "description and schema"
)

// Kinds of what a server lists that is held until approved.
const (
	KindTool     = "tool"
	KindPrompt   = "prompt"
	KindTemplate = "template" // a resource template, by its URI template
)

// kinds are the kinds in the order Held lists them.
var kinds = []string{KindTool, KindPrompt, KindTemplate}

// Held is one held tool, prompt or resource template: the version the
// server lists now, and the one approved before (nil for a new one).
type Held struct {
	Server string `json:"server"`
	// Kind is KindTool, KindPrompt or KindTemplate; Tool is the item's
	// name (a template's URI template).
	Kind string `json:"kind"`
	Tool string `json:"tool"`
	// Change is one of the Change* constants.
	Change   string   `json:"change"`
	Approved *Version `json:"approved,omitempty"`
	Listed   Version  `json:"listed"`
}

// Reason says in words why the item is held.
func (h Held) Reason() string {
	if h.Change == ChangeNew {
		if n := h.highFindings(); n > 0 {
			return fmt.Sprintf("it is new and the scan of what it says found %s", plural(n, "high-severity finding"))
		}
		return fmt.Sprintf("it is new since you approved the server's %ss", kindWord(h.Kind))
	}
	parts := strings.Split(strings.ReplaceAll(h.Change, " and ", ", "), ", ")
	for i, p := range parts {
		if p == ChangeSchema {
			parts[i] = schemaWords(h.Kind)
		}
	}
	return "its " + joinWords(parts) + " changed since you approved it"
}

// kindWord names a kind in a sentence.
func kindWord(kind string) string {
	switch kind {
	case KindPrompt:
		return "prompt"
	case KindTemplate:
		return "resource template"
	}
	return "tool"
}

// schemaWords names what a Version's InputSchema holds for kind: a
// prompt's arguments, a template's name and MIME type.
func schemaWords(kind string) string {
	switch kind {
	case KindPrompt:
		return "arguments"
	case KindTemplate:
		return "name or MIME type"
	}
	return "input schema"
}

// highFindings counts the listed version's high-severity findings.
func (h Held) highFindings() int {
	n := 0
	for _, f := range h.Listed.Findings {
		if f.Severity >= toolscan.High {
			n++
		}
	}
	return n
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// joinWords joins words as a sentence does: "a", "a and b", "a, b and c".
func joinWords(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Message is the error a client gets for a call of the tool, and what a
// log line or a notification says.
func (h Held) Message() string {
	return fmt.Sprintf("%s %q of server %q is held: %s; run: switchboard tools approve %s %s",
		kindWord(h.Kind), h.Tool, h.Server, h.Reason(), h.Server, h.Tool)
}

// A Review is what Store.Review found in one list of a server.
type Review struct {
	// Held are the tools clients must not see, by name.
	Held map[string]Held
	// Migrated names the tools whose approval of an older fingerprint
	// scheme was carried over to the new one (they still match it).
	Migrated []string
	// NewlyHeld are the held tools whose listed version was not held
	// before this review (each deserves a notice, once).
	NewlyHeld []Held
	// Approved names the tools approved by this review, How how (the
	// server's first list, or a trusted server's change); empty when none.
	Approved []string
	How      string
}

// ErrNotHeld is wrapped by Approve's error when there is nothing to approve.
var ErrNotHeld = errors.New("nothing held")

// notHeld is an error that says msg and wraps ErrNotHeld, whose own
// words would only repeat msg.
type notHeld string

func (e notHeld) Error() string { return string(e) }
func (e notHeld) Unwrap() error { return ErrNotHeld }

// ErrStale is wrapped by Approve's error when the listed version differs
// from the fingerprint the caller saw.
var ErrStale = errors.New("the tool changed again")

// items are the approved and held versions of one kind of a server's
// items, by name.
type items struct {
	Approved map[string]Version `json:"approved"`
	Held     map[string]Version `json:"held,omitempty"`
}

func newItems() *items { return &items{Approved: map[string]Version{}, Held: map[string]Version{}} }

// serverState is one server's: its tools (inline, as the first files
// had them), prompts and resource templates. Prompts and Templates are nil
// until the server's first review of them: their first list is approved
// as it is, as a server's first list of tools is, so that a server
// approved before prompts were held does not have them all held.
type serverState struct {
	items
	Prompts   *items `json:"prompts,omitempty"`
	Templates *items `json:"templates,omitempty"`
}

// of is the server's items of kind, nil when it has none yet.
func (st *serverState) of(kind string) *items {
	switch kind {
	case KindPrompt:
		return st.Prompts
	case KindTemplate:
		return st.Templates
	}
	return &st.items
}

func (st *serverState) set(kind string, it *items) {
	switch kind {
	case KindPrompt:
		st.Prompts = it
	case KindTemplate:
		st.Templates = it
	}
}

type fileData struct {
	Version int                     `json:"version"`
	Servers map[string]*serverState `json:"servers"`
}

// A Store is the approvals of every server. It is safe for concurrent use.
type Store struct {
	path string
	now  func() time.Time

	mu      sync.Mutex
	servers map[string]*serverState
	saved   []byte
}

// Open reads the approvals file at path; a missing file is an empty
// store. A file that cannot be read or parsed, or is of a newer format,
// is an error naming the file: holding nothing would defeat its purpose.
func Open(path string) (*Store, error) {
	s := &Store{path: path, now: time.Now, servers: map[string]*serverState{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the tool approvals: %w", err)
	}
	var f fileData
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("reading the tool approvals %s: %w (fix the file, or remove it: every server's tools are then approved as they are listed next)", path, err)
	}
	switch {
	case f.Version > fileVersion:
		return nil, fmt.Errorf("reading the tool approvals %s: version %d is newer than this Switchboard reads (%d); update Switchboard", path, f.Version, fileVersion)
	case f.Version < 1:
		return nil, fmt.Errorf("reading the tool approvals %s: missing or invalid \"version\" %d", path, f.Version)
	}
	for name, st := range f.Servers {
		if st == nil {
			return nil, fmt.Errorf("reading the tool approvals %s: server %q has no entry", path, name)
		}
		var all []map[string]Version
		for _, kind := range kinds {
			it := st.of(kind)
			if it == nil {
				continue
			}
			if it.Approved == nil {
				it.Approved = map[string]Version{}
			}
			if it.Held == nil {
				it.Held = map[string]Version{}
			}
			all = append(all, it.Approved, it.Held)
		}
		// The file is indented, schemas with it: back to canonical, so
		// that they compare byte for byte with listed ones.
		for _, m := range all {
			for tool, v := range m {
				for _, raw := range []*json.RawMessage{&v.InputSchema, &v.OutputSchema, &v.Annotations} {
					if *raw, err = Canonical(*raw); err != nil {
						return nil, fmt.Errorf("reading the tool approvals %s: tool %q of server %q: %w", path, tool, name, err)
					}
				}
				if f.Version == 1 {
					v.Scheme = 0 // whatever it says: version 1 had one scheme
				}
				m[tool] = v
			}
		}
		s.servers[name] = st
	}
	s.saved = data
	return s, nil
}

// Path is the file the store keeps its approvals in.
func (s *Store) Path() string { return s.path }

// version makes the Version of t listed now.
func (s *Store) version(t Tool) (Version, error) {
	fp, err := Fingerprint(t)
	if err != nil {
		return Version{}, err
	}
	// Valid: Fingerprint parsed them.
	schema, _ := Canonical(t.InputSchema)
	out, _ := Canonical(t.OutputSchema)
	ann, _ := Canonical(t.Annotations)
	return Version{Fingerprint: fp, Scheme: fingerprintScheme, Title: t.Title, Description: t.Description, InputSchema: schema,
		OutputSchema: out, Annotations: ann, Findings: t.Findings, Time: s.now().UTC()}, nil
}

// legacyMatch reports whether old, a version of an older fingerprint
// scheme, is the listed tool t under that scheme.
func legacyMatch(old Version, t Tool) bool {
	if old.Scheme >= fingerprintScheme {
		return false
	}
	fp, err := legacyFingerprint(t)
	return err == nil && fp == old.Fingerprint
}

// flagged reports whether the scanner's findings on t hold it whatever
// else holds or approves it.
func flagged(t Tool) bool { return toolscan.Max(t.Findings) >= toolscan.High }

// Review compares the tools server lists now with its approvals. A server
// never seen has its list approved as a whole (HowFirstList). When hold
// is false (the user trusts the server) every change is approved
// (HowTrusted) instead of held. Either way a tool with a High finding
// (Tool.Findings) that is not approved as it is listed is held: the
// scanner judges what the user has not seen. A tool whose schema is not
// JSON is held as changed. An approval of an older fingerprint scheme
// that the listed tool still matches is carried over (Review.Migrated).
// Held versions of tools no longer listed are forgotten. The result is
// valid even when the error, from saving the file, is not nil.
func (s *Store) Review(server string, tools []Tool, hold bool) (Review, error) {
	return s.ReviewItems(server, KindTool, tools, hold)
}

// ReviewItems is Review of the server's items of kind: its prompts (a
// Tool's InputSchema then holds the prompt's arguments) or resource
// templates (Name is the URI template; InputSchema holds its name and
// MIME type). The first list of a kind is approved as a server's first
// list is. A server's tools are reviewed before its other kinds (a
// server unknown to the store is a first list of tools).
func (s *Store) ReviewItems(server, kind string, tools []Tool, hold bool) (Review, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := Review{Held: map[string]Held{}}
	st, known := s.servers[server]
	if !known {
		st = &serverState{items: *newItems()}
		s.servers[server] = st
	}
	it := st.of(kind)
	if it == nil {
		it = newItems()
		st.set(kind, it)
		known = false
	}
	switch {
	case !known:
		r.How = HowFirstList
	case !hold:
		r.How = HowTrusted
	}
	listed := map[string]bool{}
	for _, t := range tools {
		listed[t.Name] = true
		v, err := s.version(t)
		if err != nil {
			// Not fingerprintable: never approvable silently.
			v = Version{Fingerprint: "invalid: " + err.Error(), Description: t.Description, Time: s.now().UTC()}
		}
		old, approved := it.Approved[t.Name]
		if approved && err == nil && old.Scheme == v.Scheme && old.Fingerprint == v.Fingerprint {
			delete(it.Held, t.Name)
			continue
		}
		if approved && legacyMatch(old, t) {
			// Approved under the old scheme as it is listed now: the
			// same approval, of the new fingerprint.
			v.Time, v.How = old.Time, old.How
			it.Approved[t.Name] = v
			delete(it.Held, t.Name)
			r.Migrated = append(r.Migrated, t.Name)
			continue
		}
		if r.How != "" && err == nil && !flagged(t) {
			v.How = r.How
			it.Approved[t.Name] = v
			delete(it.Held, t.Name)
			r.Approved = append(r.Approved, t.Name)
			continue
		}
		h := held(server, kind, t.Name, it, v)
		if prev, ok := it.Held[t.Name]; ok && (prev.Fingerprint == v.Fingerprint || legacyMatch(prev, t)) {
			// Held since then; the findings and scheme are this review's.
			v.Time = prev.Time
			it.Held[t.Name] = v
			h.Listed = v
		} else {
			it.Held[t.Name] = v
			r.NewlyHeld = append(r.NewlyHeld, h)
		}
		r.Held[t.Name] = h
	}
	for name := range it.Held {
		if !listed[name] {
			delete(it.Held, name)
		}
	}
	return r, s.saveLocked()
}

// held describes v, the listed version of tool, against its approval.
func held(server, kind, tool string, st *items, v Version) Held {
	h := Held{Server: server, Kind: kind, Tool: tool, Change: ChangeNew, Listed: v}
	if old, ok := st.Approved[tool]; ok {
		h.Approved = &old
		var parts []string
		// A version of the first scheme knows no title, output schema or
		// annotations: that it has none is not a change.
		full := old.Scheme >= fingerprintScheme
		if full && old.Title != v.Title {
			parts = append(parts, ChangeTitle)
		}
		if old.Description != v.Description {
			parts = append(parts, ChangeDescription)
		}
		if !bytes.Equal(old.InputSchema, v.InputSchema) {
			parts = append(parts, ChangeSchema)
		}
		if full && !bytes.Equal(old.OutputSchema, v.OutputSchema) {
			parts = append(parts, ChangeOutputSchema)
		}
		if full && !bytes.Equal(old.Annotations, v.Annotations) {
			parts = append(parts, ChangeAnnotations)
		}
		h.Change = joinWords(parts)
		if len(parts) == 0 {
			// Nothing shown differs: a schema was not JSON.
			h.Change = ChangeBoth
		}
	}
	return h
}

// Held lists every held tool, by server and tool name.
func (s *Store) Held() []Held {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Held
	for _, server := range slices.Sorted(maps.Keys(s.servers)) {
		for _, kind := range kinds {
			it := s.servers[server].of(kind)
			if it == nil {
				continue
			}
			for _, tool := range slices.Sorted(maps.Keys(it.Held)) {
				out = append(out, held(server, kind, tool, it, it.Held[tool]))
			}
		}
	}
	return out
}

// Approve approves the listed version of server's held tool, or of every
// held tool of the server when tool is "". When fingerprint is not "",
// it must be that of the held version (the one the user was shown), else
// the error wraps ErrStale. It returns what it approved; nothing held is
// an error wrapping ErrNotHeld. The approval is saved before Approve
// returns; on an error nothing changed.
func (s *Store) Approve(server, tool, fingerprint string) ([]Held, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A server the store has not seen (configured but never listed: it
	// fails to start, or is still starting) has nothing held.
	st, ok := s.servers[server]
	if !ok {
		st = &serverState{}
	}
	// Every held item of the server, tools first; a prompt shares the
	// name of a tool now and then, and both are approved by that name.
	type ref struct {
		kind, name string
		it         *items
	}
	var all, named []ref
	var names []string
	for _, kind := range kinds {
		it := st.of(kind)
		if it == nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(it.Held)) {
			r := ref{kind, name, it}
			all = append(all, r)
			if kind == KindTool {
				names = append(names, name)
			} else {
				names = append(names, name+" ("+kindWord(kind)+")")
			}
			if name == tool {
				named = append(named, r)
			}
		}
	}
	switch {
	case tool != "" && len(named) == 0 && len(all) > 0:
		return nil, notHeld(fmt.Sprintf("tool %q of server %q is not held (held: %s)", tool, server, strings.Join(names, ", ")))
	case tool != "" && len(named) == 0:
		return nil, notHeld(fmt.Sprintf("tool %q of server %q is not held: the server has no held tools", tool, server))
	case len(all) == 0:
		return nil, notHeld(fmt.Sprintf("server %q has no held tools", server))
	case tool != "":
		all = named
	}
	if fingerprint != "" && len(all) > 1 {
		// The one the user was shown, when a name is two kinds.
		all = slices.DeleteFunc(all, func(r ref) bool { return r.it.Held[r.name].Fingerprint != fingerprint })
		if len(all) == 0 {
			all = named[:1]
		}
	}
	var out []Held
	for _, r := range all {
		v := r.it.Held[r.name]
		if strings.HasPrefix(v.Fingerprint, "invalid: ") {
			return nil, fmt.Errorf("%s %q of server %q cannot be approved: %s", kindWord(r.kind), r.name, server, strings.TrimPrefix(v.Fingerprint, "invalid: "))
		}
		if fingerprint != "" && v.Fingerprint != fingerprint {
			return nil, fmt.Errorf("%s %q of server %q: %w since it was shown (listed now: %s); review it again", kindWord(r.kind), r.name, server, ErrStale, v.Fingerprint)
		}
		out = append(out, held(server, r.kind, r.name, r.it, v))
	}
	prev := cloneState(st)
	for _, h := range out {
		v := h.Listed
		v.Time, v.How = s.now().UTC(), HowUser
		it := st.of(h.Kind)
		it.Approved[h.Tool] = v
		delete(it.Held, h.Tool)
	}
	if err := s.saveLocked(); err != nil {
		s.servers[server] = prev
		return nil, err
	}
	return out, nil
}

// Forget removes everything known of server (it was uninstalled or
// removed from the config): if a server of that name comes back, its
// first list is approved again.
func (s *Store) Forget(server string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.servers[server]
	if !ok {
		return nil
	}
	delete(s.servers, server)
	if err := s.saveLocked(); err != nil {
		s.servers[server] = st
		return err
	}
	return nil
}

// Servers lists the servers the store has approvals for, sorted.
func (s *Store) Servers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.servers))
}

// ToolNames lists the names of the tools of every server but except,
// approved or held, sorted and each once: the other servers' tools a
// scan of except's list looks for (toolscan.Scan's others).
func (s *Store) ToolNames(except string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for server, st := range s.servers {
		if server == except {
			continue
		}
		for name := range st.Approved {
			seen[name] = true
		}
		for name := range st.Held {
			seen[name] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// Known reports whether the store has approvals for server.
func (s *Store) Known(server string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.servers[server]
	return ok
}

func cloneState(st *serverState) *serverState {
	c := func(it *items) *items {
		if it == nil {
			return nil
		}
		return &items{Approved: maps.Clone(it.Approved), Held: maps.Clone(it.Held)}
	}
	return &serverState{items: *c(&st.items), Prompts: c(st.Prompts), Templates: c(st.Templates)}
}

// saveLocked writes the file when its content changed.
func (s *Store) saveLocked() error {
	data, err := json.MarshalIndent(fileData{Version: fileVersion, Servers: s.servers}, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the tool approvals: %w", err)
	}
	data = append(data, '\n')
	if bytes.Equal(data, s.saved) {
		return nil
	}
	if err := atomicfile.Write(s.path, data, 0o600); err != nil {
		return fmt.Errorf("saving the tool approvals: %w", err)
	}
	s.saved = data
	return nil
}
