// Package installable holds the catalog's rules for what Switchboard can
// install and at which version: which packages it runs (Runnable), the
// exact version a package pins (ExactVersion), which remotes it connects
// to (Supported), how an entry installs (Kind) and how versions compare
// (CompareVersions, Newer). It imports only the standard library, so that
// the catalog (app/catalog), which applies the rules to its entries, and
// the CLI (app/cli), which shows them for the entries the API sends, share
// one copy without the CLI linking the catalog.
package installable

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrNotInstallable is wrapped by the errors that say an entry has no
// package Switchboard can run, or no remote it can connect to.
var ErrNotInstallable = errors.New("not installable")

// Registry types a Package may have. Switchboard runs npm, pypi, oci and
// mcpb packages (and local commands, which only the embedded catalog and the
// user give); nuget and cargo are listed but not installable.
const (
	RegistryNPM     = "npm"
	RegistryPyPI    = "pypi"
	RegistryOCI     = "oci"
	RegistryMCPB    = "mcpb"
	RegistryNuGet   = "nuget"
	RegistryCommand = "command" // Switchboard's own: a local program, as given
)

// How an entry can be installed (Kind).
const (
	KindLocal  = "local"  // a package Switchboard runs here
	KindRemote = "remote" // only a hosted endpoint
	KindBoth   = "both"   // a package and a hosted endpoint: the package unless the remote is asked for
	KindNone   = "none"   // nothing Switchboard can install
)

// Remote types (Remote.Type), as server.json names them.
const (
	RemoteStreamableHTTP = "streamable-http"
	RemoteSSE            = "sse"
)

// Package is what the rules read of a server.json package.
type Package struct {
	RegistryType string
	Identifier   string
	Version      string
	FileSHA256   string
	Transport    string // its transport's type
}

// Remote is what the rules read of a server.json remote.
type Remote struct {
	Type string
	URL  string
}

// Runnable returns nil when Switchboard can run the package, else an error
// that says why not in words a user can act on.
func Runnable(p Package) error {
	what := fmt.Sprintf("%s package %s", p.RegistryType, p.Identifier)
	switch p.RegistryType {
	case RegistryNPM, RegistryPyPI, RegistryOCI, RegistryMCPB, RegistryCommand:
	case "":
		return fmt.Errorf("package %s has no registryType", p.Identifier)
	default:
		return fmt.Errorf("package type %s is not supported (%s); Switchboard runs npm, pypi, oci and mcpb packages", p.RegistryType, p.Identifier)
	}
	// A missing transport is read as stdio: server.json requires the
	// field, but the only transport a package without one could use is
	// the one every MCP client supports.
	if t := p.Transport; t != "" && t != "stdio" {
		return fmt.Errorf("%s uses transport %s; Switchboard runs stdio packages", what, t)
	}
	if strings.TrimSpace(p.Identifier) == "" {
		return fmt.Errorf("%s package has no identifier", p.RegistryType)
	}
	switch p.RegistryType {
	case RegistryNPM, RegistryPyPI:
		if ExactVersion(p) == "" {
			return fmt.Errorf("%s has no exact version (%q); Switchboard installs pinned versions only", what, p.Version)
		}
	case RegistryOCI:
		if ExactVersion(p) == "" {
			return fmt.Errorf("%s has no tag or digest; Switchboard runs pinned images only", what)
		}
	case RegistryMCPB:
		u, err := url.Parse(p.Identifier)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return fmt.Errorf("%s: the bundle address is not an https URL", what)
		}
		if b, err := hex.DecodeString(p.FileSHA256); err != nil || len(b) != 32 {
			return fmt.Errorf("%s has no valid fileSha256, so the download cannot be verified", what)
		}
	}
	return nil
}

// ExactVersion returns the exact version the package pins, or "" when it
// pins none: the version of an npm, PyPI or NuGet package, the tag or
// digest of an OCI image (in the identifier, as server.json puts it, or in
// Version as older entries do), the version or else the SHA-256 of an
// .mcpb bundle, and the version, if given, of a local command.
func ExactVersion(p Package) string {
	switch p.RegistryType {
	case RegistryOCI:
		ref := p.Identifier
		if i := strings.LastIndex(ref, "@"); i >= 0 {
			return ref[i+1:] // a digest pins the image exactly
		}
		slash := strings.LastIndex(ref, "/")
		if i := strings.LastIndex(ref, ":"); i > slash {
			if tag := ref[i+1:]; tag != "latest" && tag != "" {
				return tag
			}
			return ""
		}
		if IsExactVersion(p.Version) {
			return p.Version
		}
		return ""
	case RegistryMCPB:
		if IsExactVersion(p.Version) {
			return p.Version
		}
		if p.FileSHA256 != "" {
			return "sha256:" + p.FileSHA256
		}
		return ""
	default:
		if IsExactVersion(p.Version) {
			return p.Version
		}
		return ""
	}
}

// RunnablePackage returns the index of the first of packages Switchboard
// can run. When there is none, the error (wrapping ErrNotInstallable) says
// why for each package, or that the server (named name) is remote-only.
func RunnablePackage(name string, packages []Package, remotes []Remote) (int, error) {
	var reasons []string
	for i, p := range packages {
		err := Runnable(p)
		if err == nil {
			return i, nil
		}
		reasons = append(reasons, err.Error())
	}
	switch {
	case len(reasons) > 0:
		return -1, fmt.Errorf("server %s is %w: %s", name, ErrNotInstallable, strings.Join(reasons, "; "))
	case len(remotes) > 0:
		return -1, fmt.Errorf("server %s is %w as a local server: it is remote-only (%s at %s); installing it configures the remote",
			name, ErrNotInstallable, remotes[0].Type, remotes[0].URL)
	default:
		return -1, fmt.Errorf("server %s is %w: it lists no packages", name, ErrNotInstallable)
	}
}

// Supported returns nil when Switchboard can connect to the remote: a
// streamable-http or sse endpoint with an http(s) URL.
func Supported(r Remote) error {
	switch r.Type {
	case RemoteStreamableHTTP, RemoteSSE:
	default:
		return fmt.Errorf("remote %s has type %q; Switchboard connects to streamable-http and sse remotes", r.URL, r.Type)
	}
	if !strings.HasPrefix(r.URL, "https://") && !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "{") {
		return fmt.Errorf("remote %s is not an http(s) URL", r.URL)
	}
	return nil
}

// InstallableRemote returns the index of the first of remotes Switchboard
// can connect to (the publisher's preference), or why there is none for
// the server named name.
func InstallableRemote(name string, remotes []Remote) (int, error) {
	var reasons []string
	for i, r := range remotes {
		err := Supported(r)
		if err == nil {
			return i, nil
		}
		reasons = append(reasons, err.Error())
	}
	if len(reasons) == 0 {
		return -1, fmt.Errorf("server %s is %w as a remote server: it lists no remotes", name, ErrNotInstallable)
	}
	return -1, fmt.Errorf("server %s is %w as a remote server: %s", name, ErrNotInstallable, strings.Join(reasons, "; "))
}

// Kind says how an entry with packages and remotes can be installed:
// KindLocal, KindRemote, KindBoth or KindNone.
func Kind(packages []Package, remotes []Remote) string {
	local := false
	for _, p := range packages {
		if Runnable(p) == nil {
			local = true
			break
		}
	}
	_, rerr := InstallableRemote("", remotes)
	switch {
	case local && rerr == nil:
		return KindBoth
	case local:
		return KindLocal
	case rerr == nil:
		return KindRemote
	default:
		return KindNone
	}
}
