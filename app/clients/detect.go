package clients

import (
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Status is what Detect found for one client.
type Status struct {
	Client    Client
	Path      string
	Installed bool    // the file exists, or a sign of the client does (see Client)
	Exists    bool    // the file exists
	Entries   []Entry // the servers the file holds
	Connected bool    // one of them is Switchboard's
	// Tokens are the bearer tokens Switchboard's entries carry (see
	// EntryToken), for the caller to check they are still in force.
	Tokens []EntryToken
	Err    error // the path could not be found or the file did not parse
}

// An EntryToken is the bearer token one of Switchboard's entries in a
// client's file carries.
type EntryToken struct {
	Entry string // the entry's name
	// Secret is the token: the Authorization header's bearer token, or the
	// bridge's SWITCHBOARD_TOKEN.
	Secret string
	// Bridge: the entry runs `switchboard connect`; Home is the data
	// directory it names (connect --home DIR), "" for the default one.
	Bridge bool
	Home   string
	// Profile is the profile whose endpoint the entry reaches (its URL's
	// /mcp/p/<profile>, the bridge's --profile), "" for another: what
	// connecting it again should keep once its token is revoked.
	Profile string
}

// entryToken returns the token e carries, if any.
func entryToken(e Entry, binary string) (EntryToken, bool) {
	t := EntryToken{Entry: e.Name}
	if isBridgeCommand(e, binary) {
		t.Bridge = true
		for i, a := range e.Args {
			if a == "--home" && i+1 < len(e.Args) {
				t.Home = e.Args[i+1]
			} else if h, ok := strings.CutPrefix(a, "--home="); ok {
				t.Home = h
			} else if a == "--profile" && i+1 < len(e.Args) {
				t.Profile = e.Args[i+1]
			} else if p, ok := strings.CutPrefix(a, "--profile="); ok {
				t.Profile = p
			}
		}
		t.Secret = e.Env[TokenEnv]
		return t, t.Secret != ""
	}
	if u, err := url.Parse(e.URL); err == nil {
		for _, endpoint := range []string{"/mcp/p/", "/sse/p/"} {
			if _, p, ok := strings.Cut(strings.TrimSuffix(u.Path, "/"), endpoint); ok && p != "" && !strings.Contains(p, "/") {
				t.Profile = p
			}
		}
	}
	for k, v := range e.Headers {
		if strings.EqualFold(k, "Authorization") {
			if scheme, secret, ok := strings.Cut(strings.TrimSpace(v), " "); ok && strings.EqualFold(scheme, "Bearer") {
				t.Secret = strings.TrimSpace(secret)
			}
		}
	}
	return t, t.Secret != ""
}

// Detect looks at every client of Table in env.
func (ed *Editor) Detect(env Env) []Status {
	out := make([]Status, 0, len(Table))
	for _, c := range Table {
		st := Status{Client: c}
		st.Path, st.Err = c.Path(env)
		if c.Remote == DeepLink {
			// The path is the app's data folder: installed or not, and
			// never connected as far as a file could tell.
			st.Installed = st.Err == nil && isDir(st.Path)
			out = append(out, st)
			continue
		}
		if st.Err == nil {
			if _, err := os.Stat(st.Path); err == nil {
				st.Installed, st.Exists = true, true
			} else if c.installed != nil {
				st.Installed = c.installed(env)
			} else {
				st.Installed = isDir(filepath.Dir(st.Path))
			}
		}
		if st.Exists {
			st.Entries, st.Err = Read(c, env)
			if st.Err == nil {
				rec, err := ed.loadOwnership(c, st.Path)
				if err != nil {
					rec = &ownership{}
				}
				for _, e := range st.Entries {
					if ed.owns(rec, e, ed.opts.BinaryPath) {
						st.Connected = true
						if t, ok := entryToken(e, ed.opts.BinaryPath); ok {
							st.Tokens = append(st.Tokens, t)
						}
					}
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// Read lists the servers in client c's file. An absent file holds none.
func Read(c Client, env Env) ([]Entry, error) {
	entries, _, err := ReadHashed(c, env)
	return entries, err
}

// ReadHashed is Read, and also returns the hash of the bytes it read: the
// Hash a Plan made from the same bytes has, so that a caller can tell
// whether a later plan saw the same file.
func ReadHashed(c Client, env Env) ([]Entry, string, error) {
	path, err := c.Path(env)
	if err != nil {
		return nil, "", err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, hashOf(nil), nil
	} else if err != nil {
		return nil, "", err
	}
	doc, err := openDocument(c, path, data)
	if err != nil {
		return nil, "", err
	}
	entries, err := doc.entries()
	if err == nil && c.ID == "gemini-cli" {
		err = geminiDisabled(doc.(*jsonDoc), entries)
	}
	return entries, hashOf(data), err
}

// geminiDisabled marks the entries Gemini CLI does not start: those in
// mcp.excluded, and, when mcp.allowed exists, those not in it.
func geminiDisabled(d *jsonDoc, entries []Entry) error {
	allowed, hasAllowed, err := d.stringList(geminiAllowed)
	if err != nil {
		return err
	}
	excluded, _, err := d.stringList(geminiExcluded)
	if err != nil {
		return err
	}
	for i, e := range entries {
		if slices.Contains(excluded, e.Name) || hasAllowed && !slices.Contains(allowed, e.Name) {
			entries[i].Disabled = true
		}
	}
	return nil
}
