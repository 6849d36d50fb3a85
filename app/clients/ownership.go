package clients

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboardhq/switchboard/app/atomicfile"
)

// An ownership record says what Switchboard wrote into one client file, so
// that it removes or replaces only entries it can prove it wrote, and so
// that disconnect can be the exact inverse of connect. It lives in the data
// directory (Options.StateDir), one JSON file per client file, 0600: it
// may hold the file's earlier bytes.
type ownership struct {
	Client string `json:"client"`
	Path   string `json:"path"`
	// Entries maps the name of each entry Switchboard wrote to the
	// fingerprint of what it wrote (see fingerprint).
	Entries map[string]string `json:"entries"`
	// After is the hash of the file as Switchboard last wrote it.
	After string `json:"after"`
	// HaveBefore says that Before is the file as it was before Switchboard
	// first connected the client, and that nothing but Switchboard has
	// changed the file since (its hash is still After): disconnect then
	// gives back Before, byte for byte (BeforeAbsent: no file at all).
	HaveBefore   bool   `json:"haveBefore,omitempty"`
	Before       []byte `json:"before,omitempty"`
	BeforeAbsent bool   `json:"beforeAbsent,omitempty"`
	// CreatedDirs are the folders connect created for a file that did not
	// exist, deepest first: disconnect removes them again when it removes
	// the file and they are empty.
	CreatedDirs []string `json:"createdDirs,omitempty"`
	// AllowedAdded and ExcludedRemoved are the names connect added to
	// Gemini CLI's mcp.allowed and took out of its mcp.excluded, which
	// disconnect undoes.
	AllowedAdded    []string `json:"allowedAdded,omitempty"`
	ExcludedRemoved []string `json:"excludedRemoved,omitempty"`
}

// fingerprint identifies what an entry holds, whatever the file's syntax
// or layout: the hash of the entry read back from the file.
//
// The fields import reads (Type, URLKey, EnvHeaders, BearerTokenEnv) are
// left out, as they were before import read them: the records written by
// earlier versions keep matching the entries they name.
func fingerprint(e Entry) string {
	e.Name = ""
	e.Type, e.URLKey, e.EnvHeaders, e.BearerTokenEnv, e.Disabled = "", "", nil, "", false
	b, _ := json.Marshal(e) // maps are written sorted
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// ownershipFile is where the record of client c's file at path is kept:
// the client's ID and a short hash of the path (a workspace client has a
// file per workspace).
func (ed *Editor) ownershipFile(c Client, path string) string {
	h := sha256.Sum256([]byte(path))
	return filepath.Join(ed.opts.StateDir, c.ID+"-"+hex.EncodeToString(h[:6])+".json")
}

// loadOwnership reads the record of c's file at path; a missing record is
// an empty one.
func (ed *Editor) loadOwnership(c Client, path string) (*ownership, error) {
	rec := &ownership{Client: c.ID, Path: path, Entries: map[string]string{}}
	data, err := os.ReadFile(ed.ownershipFile(c, path))
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	} else if err != nil {
		return nil, fmt.Errorf("reading what Switchboard wrote into %s: %w", path, err)
	}
	if err := json.Unmarshal(data, rec); err != nil {
		return nil, fmt.Errorf("reading what Switchboard wrote into %s (%s): %w", path, ed.ownershipFile(c, path), err)
	}
	if rec.Entries == nil {
		rec.Entries = map[string]string{}
	}
	return rec, nil
}

// saveOwnership writes rec, or removes the record when Switchboard has no
// entry left in the file.
func (ed *Editor) saveOwnership(c Client, rec *ownership) error {
	file := ed.ownershipFile(c, rec.Path)
	if len(rec.Entries) == 0 {
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("forgetting what Switchboard wrote into %s: %w", rec.Path, err)
		}
		return nil
	}
	if err := os.MkdirAll(ed.opts.StateDir, 0o700); err != nil {
		return fmt.Errorf("recording what Switchboard wrote into %s: %w", rec.Path, err)
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(file, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("recording what Switchboard wrote into %s: %w", rec.Path, err)
	}
	return nil
}

// isOwnName reports whether name is one Switchboard gives its entries:
// "switchboard" or "switchboard-<server>".
func isOwnName(name string) bool {
	return name == EntryName || strings.HasPrefix(name, EntryName+"-")
}

// owns reports whether Switchboard can prove it wrote entry e: the record
// holds e's name with e's fingerprint, or e points at this daemon's
// gateway, or e launches a switchboard binary (this one, or another
// install's) with `connect`.
func (ed *Editor) owns(rec *ownership, e Entry, binary string) bool {
	if fp, ok := rec.Entries[e.Name]; ok && fp == fingerprint(e) {
		return true
	}
	if u := strings.TrimSuffix(ed.opts.GatewayURL, "/"); u != "" && e.URL != "" {
		if e.URL == u || strings.HasPrefix(e.URL, u+"/") {
			return true
		}
	}
	return isBridgeCommand(e, binary)
}

// isBridgeCommand reports whether e runs `switchboard connect`: the binary
// given, or any program called switchboard.
func isBridgeCommand(e Entry, binary string) bool {
	if e.Command == "" || len(e.Args) == 0 || e.Args[0] != "connect" {
		return false
	}
	if binary != "" && e.Command == binary {
		return true
	}
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(e.Command, `\`, "/")))
	return base == "switchboard" || base == "switchboard.exe"
}

// earlierSwitchboard reports whether e, an entry of one of Switchboard's
// names that this data directory's record does not hold, is almost surely
// one an earlier Switchboard wrote (a reinstall, another data directory,
// a record lost): Switchboard's entry of a remote client, in every detail
// that the entry of another program would not share:
//
//   - a URL of plain http on a loopback address (127.0.0.0/8, ::1 or
//     localhost), any port (each daemon picks its own), with no user,
//     query or fragment;
//   - whose path is an endpoint of the gateway: /mcp, /mcp/<server> or
//     /mcp/p/<profile>;
//   - and whose only header is "Authorization: Bearer sb_…" with a secret
//     of the shape Switchboard's tokens have (sb_ and 43 base64url
//     characters: app/tokens' NewSecret).
//
// An entry that differs in any of these (another host, https, another
// path, no token or another kind of token, a header more) may be the
// user's own or another tool's, and stays a conflict. The bridge form, a
// command called switchboard run with connect (SWITCHBOARD_TOKEN in its
// env), needs no such guess: owns takes any install's as Switchboard's.
func earlierSwitchboard(e Entry) bool {
	if !e.Remote() || len(e.Headers) != 1 {
		return false
	}
	u, err := url.Parse(e.URL)
	if err != nil || u.Scheme != "http" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return false
	}
	if !loopbackHost(u.Hostname()) || !gatewayPath(u.Path) {
		return false
	}
	for k, v := range e.Headers {
		scheme, secret, ok := strings.Cut(strings.TrimSpace(v), " ")
		if !strings.EqualFold(k, "Authorization") || !ok || !strings.EqualFold(scheme, "Bearer") || !switchboardSecret(strings.TrimSpace(secret)) {
			return false
		}
	}
	return true
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// gatewayPath reports whether path is one of the gateway's endpoints:
// /mcp, /mcp/<server>, /mcp/p/<profile> (a trailing slash allowed).
func gatewayPath(path string) bool {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(path, "/"), "/mcp")
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	rest, ok = strings.CutPrefix(rest, "/")
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "p/")
	return rest != "" && !strings.Contains(rest, "/")
}

// switchboardSecret reports whether s has the shape of Switchboard's
// bearer secrets: "sb_" and 32 random bytes in unpadded base64url.
func switchboardSecret(s string) bool {
	body, ok := strings.CutPrefix(s, "sb_")
	if !ok || len(body) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(body)
	return err == nil
}
